package zipline

import "context"

func keyAndMembers(key string, members []string) []arg { return keyAndFields(key, members) }

// SAdd adds members to the set and returns how many were new.
func (c *Client) SAdd(ctx context.Context, key string, members ...string) (int64, error) {
	return do(ctx, c, decInt, "SADD", keyAndMembers(key, members)...)
}

// SRem removes members and returns how many were present.
func (c *Client) SRem(ctx context.Context, key string, members ...string) (int64, error) {
	return do(ctx, c, decInt, "SREM", keyAndMembers(key, members)...)
}

// SMembers returns every member of the set.
func (c *Client) SMembers(ctx context.Context, key string) ([]string, error) {
	return do(ctx, c, decStrings, "SMEMBERS", str(key))
}

// SIsMember reports whether member is in the set.
func (c *Client) SIsMember(ctx context.Context, key, member string) (bool, error) {
	return do(ctx, c, decBool, "SISMEMBER", str(key), str(member))
}

// SMIsMember reports, for each member, whether it is in the set.
func (c *Client) SMIsMember(ctx context.Context, key string, members ...string) ([]bool, error) {
	return do(ctx, c, decBools, "SMISMEMBER", keyAndMembers(key, members)...)
}

// SCard returns the number of members.
func (c *Client) SCard(ctx context.Context, key string) (int64, error) {
	return do(ctx, c, decInt, "SCARD", str(key))
}

// SPop removes and returns a random member, or Nil if the set is empty.
func (c *Client) SPop(ctx context.Context, key string) (string, error) {
	return do(ctx, c, decString, "SPOP", str(key))
}

// SRandMember returns a random member, or Nil if the set is empty.
func (c *Client) SRandMember(ctx context.Context, key string) (string, error) {
	return do(ctx, c, decString, "SRANDMEMBER", str(key))
}

// SInter returns the members common to all the sets.
func (c *Client) SInter(ctx context.Context, keys ...string) ([]string, error) {
	return do(ctx, c, decStrings, "SINTER", strs(keys)...)
}

// SUnion returns the members of any of the sets.
func (c *Client) SUnion(ctx context.Context, keys ...string) ([]string, error) {
	return do(ctx, c, decStrings, "SUNION", strs(keys)...)
}

// SDiff returns the members of the first set that are in none of the others.
func (c *Client) SDiff(ctx context.Context, keys ...string) ([]string, error) {
	return do(ctx, c, decStrings, "SDIFF", strs(keys)...)
}

// SAdd queues SADD; see Client.SAdd.
func (b *Batch) SAdd(key string, members ...string) *Future[int64] {
	return add(b, decInt, "SADD", keyAndMembers(key, members)...)
}

// SRem queues SREM; see Client.SRem.
func (b *Batch) SRem(key string, members ...string) *Future[int64] {
	return add(b, decInt, "SREM", keyAndMembers(key, members)...)
}

// SMembers queues SMEMBERS; see Client.SMembers.
func (b *Batch) SMembers(key string) *Future[[]string] {
	return add(b, decStrings, "SMEMBERS", str(key))
}

// SIsMember queues SISMEMBER; see Client.SIsMember.
func (b *Batch) SIsMember(key, member string) *Future[bool] {
	return add(b, decBool, "SISMEMBER", str(key), str(member))
}

// SMIsMember queues SMISMEMBER; see Client.SMIsMember.
func (b *Batch) SMIsMember(key string, members ...string) *Future[[]bool] {
	return add(b, decBools, "SMISMEMBER", keyAndMembers(key, members)...)
}

// SCard queues SCARD; see Client.SCard.
func (b *Batch) SCard(key string) *Future[int64] { return add(b, decInt, "SCARD", str(key)) }

// SPop queues SPOP; see Client.SPop.
func (b *Batch) SPop(key string) *Future[string] { return add(b, decString, "SPOP", str(key)) }

// SInter queues SINTER; see Client.SInter.
func (b *Batch) SInter(keys ...string) *Future[[]string] {
	return add(b, decStrings, "SINTER", strs(keys)...)
}

// SUnion queues SUNION; see Client.SUnion.
func (b *Batch) SUnion(keys ...string) *Future[[]string] {
	return add(b, decStrings, "SUNION", strs(keys)...)
}

// SDiff queues SDIFF; see Client.SDiff.
func (b *Batch) SDiff(keys ...string) *Future[[]string] {
	return add(b, decStrings, "SDIFF", strs(keys)...)
}
