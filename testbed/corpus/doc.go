// Package corpus generates realistic documents for compression benchmarks,
// the CLI demo and tests, and loads the real JSON samples embedded in it
// (realjson/, see RealJSON).
//
// # Why a synthetic corpus
//
// GLIDE's compression blog reports memory savings for 10,000 JSON values
// averaging 1,884 B, and a table of nine classes: JSON of 98, 461 and
// 1,884 B, HTML of 193, 556 and 1,247 B, and sessions of 198, 480 and
// 951 B. Its corpus was never published (the benchmark data the blog links
// to, valkey-glide's benchmarks/compression_benchmark, exists on no branch
// or pull request of the repository), so this package makes an equivalent
// one.
// Compression ratios depend on content far more than on size, so the
// documents are built from real field names and value shapes, not filler:
//
//   - JSON: user summaries, feature flags, price snapshots and token cache
//     entries at ~100 B; profiles, orders, analytics events and short posts
//     at ~460 B; orders, GitHub-style push events, product listing pages
//     and posts with comments at ~1.9 KB.
//   - HTML: fragments with Bootstrap-like classes: menus, alerts, price
//     blocks and breadcrumbs; product cards, comments and order tables; and
//     product grids and comment threads.
//   - Session: express-session payloads as connect-redis stores them,
//     JSON.stringify of the session (see below).
//
// Menus makes a fourth kind, outside GLIDE's table: restaurant menus as
// a delivery app caches them (store, menus, categories, items with prices,
// images and option groups), with sizes spread from 9.5 KB to 709 KB like
// the 10,000 menus of DoorDash's compression post. Menus of its two
// examples' sizes compress with LZ4 like them (6.3x at 64 KB, 5.2x at
// 350 KB; TestMenuCompressibility prints ours).
//
// Names, products, statuses and prose come from small word lists, and keys
// repeat across list items, which is what makes real payloads compress.
// Ids, UUIDs, hashes and tokens are random, which is what stops them
// compressing further. The mix was tuned against the real samples (see
// LoadRealJSON): generated json-1884 compresses about like the GitHub
// events, whose values average 1,777 B. The test TestCompressibility prints
// the table.
//
// # Session format
//
// Sessions are JSON in the shape connect-redis writes for express-session:
// a "cookie" object (originalMaxAge, expires, httpOnly...), a CSRF secret,
// passport's user id, then what the application added: locale, roles,
// last-seen time, user agent, client IP, OAuth tokens with a signed ID
// token, flash messages, a cart and recently viewed products. JSON was
// chosen because it is what the most common Node store writes, tests can
// check it with encoding/json, and it keeps the payload as text (binary
// formats such as pickle or Ruby Marshal would change the ratios for
// reasons unrelated to the data). Because the secret and tokens are random,
// small sessions barely compress; GLIDE's session figures (12% saved by
// zstd at 198 B) suggest more repetitive data than a real session holds.
//
// # Determinism
//
// Output depends only on the class kind, target size and seed: the random
// stream is math/rand/v2's PCG, and values are built with integer
// arithmetic only (see source), so the bytes are the same on every run and
// platform. Changing the generators changes the corpus; TestGolden pins
// hashes of the output so that such a change is deliberate.
package corpus
