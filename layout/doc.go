// Package layout stores a family of keys in less memory than plain Redis
// keys, behind the same key names: key zipping, hash buckets, per-namespace
// compression and hot migration between layouts.
package layout
