package corpus

import "strconv"

// jsonShapes are the kinds of JSON document, such as an order or a push
// event: small shapes grow by optional fields, larger ones by list items.
var jsonShapes = []shape[*jsonWriter]{
	{0, 220, userSummaryJSON},
	{0, 220, priceJSON},
	{0, 200, featureFlagJSON},
	{0, 220, tokenJSON},
	{150, 1400, userProfileJSON},
	{200, 1 << 30, orderJSON},
	{330, 1500, analyticsEventJSON},
	{450, 1 << 30, postJSON},
	{700, 5000, pushEventJSON},   // at most 20 commits, as in the GitHub API
	{700, 7000, productPageJSON}, // at most 24 products per page
}

// buildJSON writes one JSON document of about t bytes (see pick).
func buildJSON(s *source, w *jsonWriter, t int) { pick(s, w, t, jsonShapes, userSummaryJSON) }

// Helpers that build a value in s.tmp and write it under key k.

func (w *jsonWriter) kts(s *source, k string, unix int64) {
	s.tmp = appendISO(s.tmp[:0], unix, false)
	w.kstrb(k, s.tmp)
}

func (w *jsonWriter) kuuid(s *source, k string) {
	s.tmp = s.appendUUID(s.tmp[:0])
	w.kstrb(k, s.tmp)
}

func (w *jsonWriter) kcents(s *source, k string, cents int) {
	s.tmp = appendCents(s.tmp[:0], cents)
	w.kstrb(k, s.tmp)
}

func (w *jsonWriter) kemail(s *source, k string, p person) {
	s.tmp = s.appendEmail(s.tmp[:0], p)
	w.kstrb(k, s.tmp)
}

func (w *jsonWriter) kprose(s *source, k string, minW, maxW int) {
	s.tmp = s.appendProse(s.tmp[:0], minW, maxW)
	w.kstrb(k, s.tmp)
}

// userSummaryJSON: a cached user summary, e.g. for a header or mention.
func userSummaryJSON(s *source, w *jsonWriter, t int) {
	p := s.person()
	w.obj()
	w.kint("id", int64(s.between(100000, 99999999)))
	s.tmp = s.appendUsername(s.tmp[:0], p)
	w.kstrb("username", s.tmp)
	w.optional(t,
		func() { w.kstr("name", p.first+" "+p.last) },
		func() { w.kstr("plan", s.pick(plans)) },
		func() { w.kbool("verified", s.chance(70)) },
		func() { w.kts(s, "created_at", s.ago(3*365*86400)) },
		func() { w.kemail(s, "email", p) },
		func() { w.kint("followers", int64(s.between(0, 5000))) },
		func() { w.kstr("locale", s.pick(locales)) },
		func() {
			s.tmp = append(s.tmp[:0], "https://cdn.example.com/avatars/"...)
			s.tmp = append(s.appendHex(s.tmp, 8), ".jpg"...)
			w.kstrb("avatar", s.tmp)
		},
	)
	w.endObj()
}

// priceJSON: a cached price and stock snapshot for one SKU.
func priceJSON(s *source, w *jsonWriter, t int) {
	pr := s.product()
	w.obj()
	w.kstr("sku", pr.sku)
	w.kcents(s, "price", pr.cents)
	w.optional(t,
		func() { w.kstr("currency", s.pick(currencies)) },
		func() { w.kbool("in_stock", s.chance(85)) },
		func() { w.kint("qty", int64(s.between(0, 480))) },
		func() { w.kts(s, "updated_at", s.ago(7*86400)) },
		func() { w.kcents(s, "compare_at", pr.cents+s.between(2, 20)*100) },
		func() { w.kstr("vendor", pr.vendor) },
		func() { w.kint("warehouse", int64(s.between(1, 12))) },
	)
	w.endObj()
}

// featureFlagJSON: a feature-flag or experiment record.
func featureFlagJSON(s *source, w *jsonWriter, t int) {
	names := [...]string{"checkout_v2", "new_nav", "search_autocomplete", "dark_mode", "one_click_buy", "reviews_widget"}
	w.obj()
	w.kstr("flag", names[s.intn(len(names))])
	w.kbool("enabled", s.chance(60))
	w.optional(t,
		func() { w.kint("rollout", int64(5*s.between(0, 20))) },
		func() { w.kstr("variant", [...]string{"control", "treatment", "A", "B"}[s.intn(4)]) },
		func() { w.kts(s, "updated_at", s.ago(30*86400)) },
		func() { w.kemail(s, "updated_by", s.person()) },
		func() {
			w.list(t, "segments", 1, s.between(1, 3), func() { w.str(s.pick([]string{"beta", "internal", "eu", "mobile", "vip"})) })
		},
	)
	w.endObj()
}

// tokenJSON: an API-token cache entry, keyed by a UUID.
func tokenJSON(s *source, w *jsonWriter, t int) {
	w.obj()
	w.kuuid(s, "token_id")
	w.kint("user_id", int64(s.between(100000, 99999999)))
	w.optional(t,
		func() {
			w.kstr("scope", [...]string{"read", "read write", "read:orders write:cart", "admin"}[s.intn(4)])
		},
		func() { w.kint("exp", s.now+int64(s.between(300, 86400))) },
		func() { w.kstr("client", [...]string{"web", "ios", "android", "cli"}[s.intn(4)]) },
		func() { s.tmp = s.appendIP(s.tmp[:0]); w.kstrb("ip", s.tmp) },
		func() { w.kbool("mfa", s.chance(30)) },
	)
	w.endObj()
}

// userProfileJSON: a full user profile as an account API returns it.
func userProfileJSON(s *source, w *jsonWriter, t int) {
	p := s.person()
	c := cities[s.intn(len(cities))]
	id := s.between(100000, 99999999)
	w.obj()
	user := string(s.appendUsername(nil, p))
	w.kint("id", int64(id))
	w.kstr("username", user)
	w.kemail(s, "email", p)
	w.kts(s, "created_at", s.ago(4*365*86400))
	w.optional(t,
		func() { w.kstr("first_name", p.first); w.kstr("last_name", p.last) },
		func() {
			// Resource links, as in the GitHub API: long shared prefixes.
			api := "https://api.example.com/v1/users/" + strconv.Itoa(id)
			w.kstr("url", api)
			w.kstr("html_url", "https://example.com/u/"+user)
			w.kstr("orders_url", api+"/orders")
			w.kstr("addresses_url", api+"/addresses")
		},
		func() { w.kstr("plan", s.pick(plans)); w.kbool("email_verified", s.chance(80)) },
		func() {
			s.tmp = append(s.tmp[:0], "https://cdn.example.com/avatars/"...)
			s.tmp = strconv.AppendInt(s.tmp, int64(id), 10)
			s.tmp = append(s.tmp, "/256.jpg"...)
			w.kstrb("avatar_url", s.tmp)
		},
		func() { w.kts(s, "last_login_at", s.ago(10*86400)) },
		func() {
			w.kobj("settings")
			w.kstr("theme", s.pick(themes))
			w.kstr("locale", s.pick(locales))
			w.kstr("timezone", c.tz)
			w.kobj("notifications")
			w.kbool("email", s.chance(70))
			w.kbool("push", s.chance(40))
			w.kbool("sms", s.chance(10))
			w.endObj()
			w.endObj()
		},
		func() { w.kprose(s, "bio", 6, 20) },
		func() {
			w.list(t, "addresses", 1, s.between(1, 3), func() {
				c := cities[s.intn(len(cities))]
				w.obj()
				w.kstr("label", [...]string{"home", "work", "other"}[s.intn(3)])
				s.tmp = strconv.AppendInt(s.tmp[:0], int64(s.between(1, 9999)), 10)
				s.tmp = append(append(s.tmp, ' '), s.pick(streetNames)...)
				w.kstrb("line1", s.tmp)
				w.kstr("city", c.city)
				w.kstr("region", c.region)
				w.kstr("postal_code", c.zip)
				w.kstr("country", c.country)
				w.kbool("default", s.chance(30))
				w.endObj()
			})
		},
		func() {
			w.kobj("stats")
			w.kint("orders", int64(s.between(0, 80)))
			w.kint("reviews", int64(s.between(0, 30)))
			w.kint("followers", int64(s.between(0, 2000)))
			w.kint("following", int64(s.between(0, 500)))
			w.endObj()
		},
		func() {
			w.list(t, "roles", 1, s.between(1, 3), func() { w.str(s.pick(roles)) })
		},
	)
	w.list(t, "recent_logins", 0, 1<<30, func() {
		w.obj()
		w.kts(s, "at", s.ago(30*86400))
		s.tmp = s.appendIP(s.tmp[:0])
		w.kstrb("ip", s.tmp)
		w.kstr("user_agent", s.pick(userAgents))
		w.kbool("success", s.chance(92))
		w.endObj()
	})
	w.endObj()
}

// orderJSON: an e-commerce order (Shopify-like field names); small goals
// give a summary, larger ones add customer, addresses and payment.
func orderJSON(s *source, w *jsonWriter, t int) {
	created := s.ago(60 * 86400)
	cur := s.pick(currencies)
	w.obj()
	s.tmp = append(s.tmp[:0], "ord_"...)
	s.tmp = s.appendBase62(s.tmp, 14)
	w.kstrb("id", s.tmp)
	w.kint("number", int64(s.between(100000, 999999)))
	w.kstr("status", s.pick(orderStatuses))
	w.kts(s, "created_at", created)
	w.kstr("currency", cur)
	items := s.between(1, 5)
	w.kcents(s, "total", s.between(items*500, items*9000))
	if t >= 900 {
		w.kts(s, "updated_at", created+int64(s.between(60, 5*86400)))
		w.kcents(s, "subtotal", s.between(items*500, items*8000))
		w.kcents(s, "total_tax", s.between(0, items*700))
		w.kcents(s, "shipping", [...]int{0, 499, 799, 1299}[s.intn(4)])
		p := s.person()
		c := cities[s.intn(len(cities))]
		w.kobj("customer")
		w.kint("id", int64(s.between(100000, 99999999)))
		w.kemail(s, "email", p)
		w.kstr("first_name", p.first)
		w.kstr("last_name", p.last)
		w.kint("orders_count", int64(s.between(1, 40)))
		w.kbool("accepts_marketing", s.chance(35))
		w.endObj()
		w.kobj("shipping_address")
		w.kstr("name", p.first+" "+p.last)
		s.tmp = strconv.AppendInt(s.tmp[:0], int64(s.between(1, 9999)), 10)
		s.tmp = append(append(s.tmp, ' '), s.pick(streetNames)...)
		w.kstrb("address1", s.tmp)
		w.kstr("city", c.city)
		w.kstr("province_code", c.region)
		w.kstr("country_code", c.country)
		w.kstr("zip", c.zip)
		w.endObj()
		w.kobj("payment")
		w.kstr("method", "card")
		w.kstr("brand", s.pick(cardBrands))
		s.tmp = strconv.AppendInt(s.tmp[:0], int64(s.between(1000, 9999)), 10)
		w.kstrb("last4", s.tmp)
		w.kstr("status", "captured")
		s.tmp = append(s.tmp[:0], "ch_"...)
		s.tmp = s.appendBase62(s.tmp, 24)
		w.kstrb("transaction_id", s.tmp)
		w.endObj()
		w.list(t, "tags", 0, s.between(0, 3), func() { w.str(s.pick(tags)) })
	} else {
		w.kint("customer_id", int64(s.between(100000, 99999999)))
	}
	w.list(t, "line_items", 1, 1<<30, func() {
		pr := s.product()
		w.obj()
		if t >= 900 {
			w.kint("id", int64(s.between(10000000, 99999999)))
			w.kint("product_id", int64(pr.id))
		}
		w.kstr("sku", pr.sku)
		w.kstr("title", pr.title)
		w.kint("quantity", int64(s.between(1, 3)))
		w.kcents(s, "price", pr.cents)
		if t >= 900 {
			w.kstr("variant_title", s.pick(colors)+" / "+s.pick(apparelSizes))
			w.kstr("vendor", pr.vendor)
			w.kbool("requires_shipping", s.chance(90))
			w.kstr("fulfillment_status", [...]string{"fulfilled", "unfulfilled", "partial"}[s.intn(3)])
		}
		w.endObj()
	})
	w.endObj()
}

// analyticsEventJSON: a tracking event in the shape of Segment's track
// call (e-commerce spec), as queued in Redis before a batch upload. The
// products list grows with the goal, as for a cart or an order.
func analyticsEventJSON(s *source, w *jsonWriter, t int) {
	w.obj()
	w.kuuid(s, "anonymousId")
	w.kobj("context")
	s.tmp = s.appendIP(s.tmp[:0])
	w.kstrb("ip", s.tmp)
	w.kstr("locale", s.pick(locales))
	w.kobj("page")
	path := s.pick(paths)
	w.kstr("path", path)
	if t >= 600 {
		w.kstr("referrer", s.pick(referrers))
	}
	w.kstr("url", "https://shop.example.com"+path)
	w.endObj()
	if t >= 600 {
		w.kstr("userAgent", s.pick(userAgents))
	}
	w.endObj()
	w.kstr("event", [...]string{"Cart Viewed", "Checkout Started", "Order Completed", "Product List Viewed"}[s.intn(4)])
	w.kuuid(s, "messageId")
	s.tmp = s.appendISOms(s.tmp[:0], s.now)
	w.kstrb("timestamp", s.tmp)
	w.kstr("type", "track")
	s.tmp = append(s.tmp[:0], "usr_"...)
	s.tmp = s.appendBase62(s.tmp, 12)
	w.kstrb("userId", s.tmp)
	w.kobj("properties")
	w.kstr("currency", s.pick(currencies))
	w.optional(t,
		func() {
			s.tmp = append(s.tmp[:0], "ord_"...)
			s.tmp = s.appendBase62(s.tmp, 14)
			w.kstrb("order_id", s.tmp)
		},
		func() { w.key("total"); w.dec(s.between(500, 40000), 2) },
	)
	w.list(t, "products", 1, 1<<30, func() {
		pr := s.product()
		w.obj()
		w.kint("product_id", int64(pr.id))
		w.kstr("sku", pr.sku)
		w.kstr("name", pr.title)
		w.key("price")
		w.dec(pr.cents, 2)
		w.kint("quantity", int64(s.between(1, 3)))
		w.kstr("category", productCategories[s.intn(len(productCategories))].slug)
		w.endObj()
	})
	w.endObj()
	w.endObj()
}
