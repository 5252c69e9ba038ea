package corpus

import "strconv"

// Larger JSON shapes: API responses that grow by list items.

// postHead writes the fields a post and each of its comments start with:
// a snowflake id and an author object (id, username, display name), left
// open for the caller to add to and close.
func postHead(s *source, w *jsonWriter) {
	p := s.person()
	s.tmp = strconv.AppendInt(s.tmp[:0], 1700000000000000000+int64(s.r.Uint64()>>5)%90000000000000000, 10)
	w.kstrb("id", s.tmp)
	w.kobj("author")
	w.kint("id", int64(s.between(100000, 99999999)))
	s.tmp = s.appendUsername(s.tmp[:0], p)
	w.kstrb("username", s.tmp)
	w.kstr("display_name", p.first+" "+p.last)
}

// postJSON: a social post with its author and first comments.
func postJSON(s *source, w *jsonWriter, t int) {
	w.obj()
	postHead(s, w)
	w.kbool("verified", s.chance(10))
	w.endObj()
	w.kprose(s, "text", 8, 40)
	w.kts(s, "created_at", s.ago(3*86400))
	w.kstr("lang", "en")
	w.kobj("stats")
	w.kint("likes", int64(s.between(0, 2500)))
	w.kint("reposts", int64(s.between(0, 300)))
	w.kint("replies", int64(s.between(0, 120)))
	w.kint("views", int64(s.between(50, 90000)))
	w.endObj()
	if t >= 900 {
		w.list(t, "media", 0, s.between(0, 2), func() {
			w.obj()
			w.kstr("type", "photo")
			s.tmp = append(s.tmp[:0], "https://media.example.com/p/"...)
			s.tmp = append(s.appendBase62(s.tmp, 15), ".jpg"...)
			w.kstrb("url", s.tmp)
			w.kint("width", int64([...]int{1080, 1200, 1600, 2048}[s.intn(4)]))
			w.kint("height", int64([...]int{810, 900, 1200, 1536}[s.intn(4)]))
			w.endObj()
		})
	}
	w.list(t, "comments", 0, 1<<30, func() {
		w.obj()
		postHead(s, w)
		w.endObj()
		w.kprose(s, "text", 4, 24)
		w.kts(s, "created_at", s.ago(2*86400))
		w.kint("likes", int64(s.between(0, 80)))
		w.endObj()
	})
	w.endObj()
}

// pushEventJSON: a PushEvent from the GitHub events API, growing by
// commits.
func pushEventJSON(s *source, w *jsonWriter, t int) {
	p := s.person()
	login := string(s.appendUsername(nil, p))
	org := [...]string{"acme", "northwind", "bluecorp", "opensrc", login}[s.intn(5)]
	repo := org + "/" + s.pick(repoNames)
	w.obj()
	s.tmp = strconv.AppendInt(s.tmp[:0], int64(s.between(20000000000, 40000000000)), 10)
	w.kstrb("id", s.tmp)
	w.kstr("type", "PushEvent")
	actorID := int64(s.between(1000, 150000000))
	w.kobj("actor")
	w.kint("id", actorID)
	w.kstr("login", login)
	w.kstr("display_login", login)
	w.kstr("gravatar_id", "")
	w.kstr("url", "https://api.github.com/users/"+login)
	s.tmp = append(s.tmp[:0], "https://avatars.githubusercontent.com/u/"...)
	s.tmp = append(strconv.AppendInt(s.tmp, actorID, 10), '?')
	w.kstrb("avatar_url", s.tmp)
	w.endObj()
	w.kobj("repo")
	w.kint("id", int64(s.between(1000000, 800000000)))
	w.kstr("name", repo)
	w.kstr("url", "https://api.github.com/repos/"+repo)
	w.endObj()
	w.kbool("public", s.chance(80))
	w.kts(s, "created_at", s.now)
	w.kobj("payload")
	w.kint("repository_id", int64(s.between(1000000, 800000000)))
	w.kint("push_id", int64(s.between(10000000000, 20000000000)))
	w.kstr("ref", "refs/heads/"+s.pick(branches))
	s.tmp = s.appendHex(s.tmp[:0], 20)
	w.kstrb("head", s.tmp)
	s.tmp = s.appendHex(s.tmp[:0], 20)
	w.kstrb("before", s.tmp)
	const tail = len(`,"size":3,"distinct_size":3`)
	n := w.list(t-tail, "commits", 1, 20, func() {
		q := p
		if s.chance(30) {
			q = s.person()
		}
		sha := s.appendHex(nil, 20)
		w.obj()
		w.kstrb("sha", sha)
		w.kobj("author")
		w.kemail(s, "email", q)
		w.kstr("name", q.first+" "+q.last)
		w.endObj()
		s.tmp = append(append(s.tmp[:0], s.pick(commitVerbs)...), ' ')
		s.tmp = append(s.tmp, s.pick(commitObjects)...)
		if s.chance(40) {
			s.tmp = append(s.tmp, "\n\n"...)
			s.tmp = s.appendProse(s.tmp, 6, 30)
		}
		w.kstrb("message", s.tmp)
		w.kbool("distinct", s.chance(95))
		s.tmp = append(s.tmp[:0], "https://api.github.com/repos/"...)
		s.tmp = append(append(append(s.tmp, repo...), "/commits/"...), sha...)
		w.kstrb("url", s.tmp)
		w.endObj()
	})
	w.kint("size", int64(n))
	w.kint("distinct_size", int64(n))
	w.endObj()
	w.endObj()
}

// productPageJSON: one page of a paginated product-listing API.
func productPageJSON(s *source, w *jsonWriter, t int) {
	cat := productCategories[s.intn(len(productCategories))].slug
	page := s.between(1, 40)
	base := "https://api.example.com/v1/products?category=" + cat + "&page="
	w.obj()
	w.kobj("meta")
	w.kint("page", int64(page))
	w.kint("per_page", 24)
	w.kint("total", int64(s.between(page*24, 5000)))
	w.kstr("sort", [...]string{"relevance", "price_asc", "price_desc", "newest", "rating"}[s.intn(5)])
	w.endObj()
	w.kobj("links")
	w.kstr("self", base+strconv.Itoa(page))
	w.kstr("next", base+strconv.Itoa(page+1))
	if page > 1 {
		w.kstr("prev", base+strconv.Itoa(page-1))
	}
	w.endObj()
	w.list(t, "data", 1, 24, func() {
		pr := s.product()
		w.obj()
		w.kint("id", int64(pr.id))
		w.kstr("sku", pr.sku)
		w.kstr("name", pr.title)
		s.tmp = appendSlug(s.tmp[:0], pr.title)
		w.kstrb("slug", s.tmp)
		w.kstr("vendor", pr.vendor)
		w.kprose(s, "summary", 5, 14)
		w.kobj("price")
		w.kint("amount", int64(pr.cents))
		w.kstr("currency", "USD")
		w.endObj()
		w.key("rating")
		w.dec(s.between(25, 50), 1)
		w.kint("review_count", int64(s.between(0, 2400)))
		w.kbool("in_stock", s.chance(85))
		s.tmp = append(s.tmp[:0], "https://cdn.example.com/products/"...)
		s.tmp = append(s.appendHex(s.tmp, 16), ".jpg"...)
		w.kstrb("image", s.tmp)
		w.kts(s, "updated_at", s.ago(200*86400))
		w.endObj()
	})
	w.endObj()
}
