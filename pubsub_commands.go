package zipline

// This file defines the pub/sub commands that go over the shared
// connection: PUBLISH, SPUBLISH and PUBSUB's introspection. Subscribing
// is in subscription.go.

// Publish sends msg to channel and returns how many subscribers got it.
// With Compression.Families including PubSub, msg is compressed like a
// stored value, and subscribers expand it (see Client.DecodeValue).
//
//zipline:twins Publish
func publishCmd(channel string, msg []byte) command[int64] {
	return define(decInt, specPUBLISH, str(channel), bin(msg))
}

// SPublish is Publish to a sharded channel (SPUBLISH, Redis and Valkey 7):
// on a cluster it goes to the node that owns the channel's slot.
//
//zipline:twins SPublish
func spublishCmd(channel string, msg []byte) command[int64] {
	return define(decInt, specSPUBLISH, keyArg(channel), bin(msg))
}

// PubSubChannels returns the channels with subscribers matching pattern
// ("": all), on the node the command reaches.
//
//zipline:twins PubSubChannels
func pubSubChannelsCmd(pattern string) command[[]string] {
	if pattern == "" {
		return define(decStrings, specPUBSUB_CHANNELS)
	}
	return define(decStrings, specPUBSUB_CHANNELS, str(pattern))
}

// PubSubNumSub returns how many subscribers each channel has.
//
//zipline:twins PubSubNumSub
func pubSubNumSubCmd(channels ...string) command[map[string]int64] {
	return define(decStringIntMap, specPUBSUB_NUMSUB, strArgs(channels)...)
}

// PubSubNumPat returns how many pattern subscriptions there are.
//
//zipline:twins PubSubNumPat
func pubSubNumPatCmd() command[int64] { return define(decInt, specPUBSUB_NUMPAT) }

// PubSubShardChannels returns the sharded channels with subscribers
// matching pattern ("": all), on the node the command reaches.
//
//zipline:twins PubSubShardChannels
func pubSubShardChannelsCmd(pattern string) command[[]string] {
	if pattern == "" {
		return define(decStrings, specPUBSUB_SHARDCHANNELS)
	}
	return define(decStrings, specPUBSUB_SHARDCHANNELS, str(pattern))
}

// PubSubShardNumSub returns how many subscribers each sharded channel has.
//
//zipline:twins PubSubShardNumSub
func pubSubShardNumSubCmd(channels ...string) command[map[string]int64] {
	return define(decStringIntMap, specPUBSUB_SHARDNUMSUB, strArgs(channels)...)
}
