package zipline

import "context"

// SAdd adds members to the set and returns how many were new.
func (c *Client) SAdd(ctx context.Context, key string, members ...string) (int64, error) {
	return run(ctx, c, fieldsCmd(decInt, "SADD", key, members))
}

// SAdd queues SADD; see Client.SAdd.
func (b *Batch) SAdd(key string, members ...string) *Future[int64] {
	return enqueue(b, fieldsCmd(decInt, "SADD", key, members))
}

// SRem removes members and returns how many were present.
func (c *Client) SRem(ctx context.Context, key string, members ...string) (int64, error) {
	return run(ctx, c, fieldsCmd(decInt, "SREM", key, members))
}

// SRem queues SREM; see Client.SRem.
func (b *Batch) SRem(key string, members ...string) *Future[int64] {
	return enqueue(b, fieldsCmd(decInt, "SREM", key, members))
}

// SMembers returns every member of the set.
func (c *Client) SMembers(ctx context.Context, key string) ([]string, error) {
	return run(ctx, c, keyCmd(decStrings, "SMEMBERS", key))
}

// SMembers queues SMEMBERS; see Client.SMembers.
func (b *Batch) SMembers(key string) *Future[[]string] {
	return enqueue(b, keyCmd(decStrings, "SMEMBERS", key))
}

// SIsMember reports whether member is in the set.
func (c *Client) SIsMember(ctx context.Context, key, member string) (bool, error) {
	return run(ctx, c, fieldCmd(decBool, "SISMEMBER", key, member))
}

// SIsMember queues SISMEMBER; see Client.SIsMember.
func (b *Batch) SIsMember(key, member string) *Future[bool] {
	return enqueue(b, fieldCmd(decBool, "SISMEMBER", key, member))
}

// SMIsMember reports, for each member, whether it is in the set.
func (c *Client) SMIsMember(ctx context.Context, key string, members ...string) ([]bool, error) {
	return run(ctx, c, fieldsCmd(decBools, "SMISMEMBER", key, members))
}

// SMIsMember queues SMISMEMBER; see Client.SMIsMember.
func (b *Batch) SMIsMember(key string, members ...string) *Future[[]bool] {
	return enqueue(b, fieldsCmd(decBools, "SMISMEMBER", key, members))
}

// SCard returns the number of members.
func (c *Client) SCard(ctx context.Context, key string) (int64, error) {
	return run(ctx, c, keyCmd(decInt, "SCARD", key))
}

// SCard queues SCARD; see Client.SCard.
func (b *Batch) SCard(key string) *Future[int64] { return enqueue(b, keyCmd(decInt, "SCARD", key)) }

// SPop removes and returns a random member, or Nil if the set is empty.
func (c *Client) SPop(ctx context.Context, key string) (string, error) {
	return run(ctx, c, keyCmd(decString, "SPOP", key))
}

// SPop queues SPOP; see Client.SPop.
func (b *Batch) SPop(key string) *Future[string] { return enqueue(b, keyCmd(decString, "SPOP", key)) }

// SRandMember returns a random member without removing it, or Nil if the
// set is empty.
func (c *Client) SRandMember(ctx context.Context, key string) (string, error) {
	return run(ctx, c, keyCmd(decString, "SRANDMEMBER", key))
}

// SRandMember queues SRANDMEMBER; see Client.SRandMember.
func (b *Batch) SRandMember(key string) *Future[string] {
	return enqueue(b, keyCmd(decString, "SRANDMEMBER", key))
}

// SInter returns the members common to every set.
func (c *Client) SInter(ctx context.Context, keys ...string) ([]string, error) {
	return run(ctx, c, keysCmd(decStrings, "SINTER", keys))
}

// SInter queues SINTER; see Client.SInter.
func (b *Batch) SInter(keys ...string) *Future[[]string] {
	return enqueue(b, keysCmd(decStrings, "SINTER", keys))
}

// SUnion returns the members of any of the sets.
func (c *Client) SUnion(ctx context.Context, keys ...string) ([]string, error) {
	return run(ctx, c, keysCmd(decStrings, "SUNION", keys))
}

// SUnion queues SUNION; see Client.SUnion.
func (b *Batch) SUnion(keys ...string) *Future[[]string] {
	return enqueue(b, keysCmd(decStrings, "SUNION", keys))
}

// SDiff returns the members of the first set that are in none of the
// others.
func (c *Client) SDiff(ctx context.Context, keys ...string) ([]string, error) {
	return run(ctx, c, keysCmd(decStrings, "SDIFF", keys))
}

// SDiff queues SDIFF; see Client.SDiff.
func (b *Batch) SDiff(keys ...string) *Future[[]string] {
	return enqueue(b, keysCmd(decStrings, "SDIFF", keys))
}
