package corpus

import (
	"strconv"
	"time"
)

// htmlWriter appends an HTML fragment, tracking open elements so a builder
// knows how many bytes the closing tags will take and can take back the
// last element it added (see add).
type htmlWriter struct {
	b       []byte
	stack   []string // open elements, innermost last
	closing int      // bytes of the closing tags of stack
}

func (w *htmlWriter) reset(buf []byte) {
	w.b = buf[:0]
	w.stack = w.stack[:0]
	w.closing = 0
}

// tag writes a start tag with attributes given as name, value pairs.
func (w *htmlWriter) tag(name string, attrs []string) {
	w.b = append(w.b, '<')
	w.b = append(w.b, name...)
	for i := 0; i+1 < len(attrs); i += 2 {
		w.b = append(w.b, ' ')
		w.b = append(w.b, attrs[i]...)
		w.b = append(w.b, '=', '"')
		w.b = appendHTMLEscaped(w.b, attrs[i+1])
		w.b = append(w.b, '"')
	}
	w.b = append(w.b, '>')
}

// open writes a start tag that close will end.
func (w *htmlWriter) open(name string, attrs ...string) {
	w.tag(name, attrs)
	w.stack = append(w.stack, name)
	w.closing += len(name) + 3
}

// void writes an element without content or end tag, such as img.
func (w *htmlWriter) void(name string, attrs ...string) { w.tag(name, attrs) }

// close ends the innermost open element.
func (w *htmlWriter) close() {
	name := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	w.closing -= len(name) + 3
	w.b = append(w.b, '<', '/')
	w.b = append(w.b, name...)
	w.b = append(w.b, '>')
}

// text writes escaped text.
func (w *htmlWriter) text(s string) { w.b = appendHTMLEscaped(w.b, s) }

// elem writes a whole element holding text.
func (w *htmlWriter) elem(name, text string, attrs ...string) {
	w.open(name, attrs...)
	w.text(text)
	w.close()
}

// size is the length the fragment would have if closed now.
func (w *htmlWriter) size() int { return len(w.b) + w.closing }

// add writes one balanced element with fn and keeps it only if keep
// agrees; see jsonWriter.add.
func (w *htmlWriter) add(target int, fn func()) bool {
	n, before := len(w.b), w.size()
	fn()
	if keep(before, w.size(), target) {
		return w.size() < target
	}
	w.b = w.b[:n]
	return false
}

// written is how many bytes the fragment holds so far.
func (w *htmlWriter) written() int { return len(w.b) }

// optional adds each element in order while the fragment is short of t.
func (w *htmlWriter) optional(t int, parts ...func()) {
	for _, f := range parts {
		if w.size() >= t {
			return
		}
		w.add(t, f)
	}
}

// appendHTMLEscaped appends s with &, <, > and " escaped, which is safe
// both in text and in double-quoted attribute values.
func appendHTMLEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			dst = append(dst, "&amp;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '"':
			dst = append(dst, "&quot;"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// htmlShapes are the kinds of HTML fragment.
var htmlShapes = []shape[*htmlWriter]{
	{0, 560, navListHTML}, // up to about ten links
	{0, 320, alertHTML},
	{0, 320, priceHTML},
	{180, 420, breadcrumbHTML},
	{520, 1100, productCardHTML},
	{600, 1 << 30, commentHTML},
	{350, 1 << 30, orderTableHTML},
	{900, 1 << 30, productGridHTML},
}

// buildHTML writes one HTML fragment of about t bytes (see pick).
func buildHTML(s *source, w *htmlWriter, t int) { pick(s, w, t, htmlShapes, navListHTML) }

// navListHTML: a navigation or category menu, one item per link.
func navListHTML(s *source, w *htmlWriter, t int) {
	w.open("ul", "class", "nav flex-column")
	active := s.intn(12) // the current page's link, if the menu gets that far
	i := 0
	grow(w, t, 1<<30, func() {
		cat := productCategories[s.intn(len(productCategories))]
		cls := "nav-link"
		if i == active {
			cls = "nav-link active"
		}
		i++
		w.open("li", "class", "nav-item")
		w.open("a", "class", cls, "href", "/c/"+cat.slug)
		w.text(cat.name)
		if s.chance(50) {
			w.elem("span", strconv.Itoa(s.between(1, 999)), "class", "badge rounded-pill")
		}
		w.close()
		w.close()
	})
	w.close()
}

// alertHTML: a dismissible notice, such as one rendered from a flash
// message.
func alertHTML(s *source, w *htmlWriter, t int) {
	kinds := [...]struct{ class, label string }{
		{"success", "Success!"}, {"info", "Note:"}, {"warning", "Heads up!"}, {"danger", "Error:"},
	}
	k := kinds[s.intn(len(kinds))]
	w.open("div", "class", "alert alert-"+k.class, "role", "alert")
	if s.chance(60) {
		w.elem("strong", k.label)
		w.text(" ")
	}
	w.text(s.pick(flashMessages))
	w.optional(t,
		func() {
			w.text(" ")
			w.elem("a", "View details", "href", "/account/orders/"+strconv.Itoa(s.between(100000, 999999)), "class", "alert-link")
		},
		func() {
			w.open("button", "type", "button", "class", "btn-close", "data-bs-dismiss", "alert", "aria-label", "Close")
			w.close()
		},
	)
	w.close()
}

// priceHTML: a price block with an optional sale price and stock note.
func priceHTML(s *source, w *htmlWriter, t int) {
	pr := s.product()
	w.open("div", "class", "price", "data-sku", pr.sku)
	w.elem("span", "$"+string(appendCents(nil, pr.cents)), "class", "price__current")
	w.optional(t,
		func() {
			w.elem("s", "$"+string(appendCents(nil, pr.cents+s.between(2, 30)*100)), "class", "price__was")
		},
		func() { w.elem("span", "Sale", "class", "badge bg-danger") },
		func() {
			w.elem("small", "Only "+strconv.Itoa(s.between(1, 9))+" left in stock", "class", "price__stock text-muted")
		},
		func() { w.elem("span", "Free shipping", "class", "price__shipping") },
	)
	w.close()
}

// breadcrumbHTML: a breadcrumb trail to a product page: Home, then as
// many of category, product type and brand as fit, then the product.
func breadcrumbHTML(s *source, w *htmlWriter, t int) {
	pr := s.product()
	cat := productCategories[s.intn(len(productCategories))]
	typ := "/c/" + cat.slug + "/" + string(appendSlug(nil, pr.noun))
	levels := [...]struct{ name, href string }{
		{cat.name, "/c/" + cat.slug},
		{pr.noun, typ},
		{pr.vendor, typ + "?brand=" + string(appendSlug(nil, pr.vendor))},
	}
	last := len(`<li class="breadcrumb-item active" aria-current="page"></li>`) + len(pr.title)
	w.open("nav", "aria-label", "breadcrumb")
	w.open("ol", "class", "breadcrumb")
	w.open("li", "class", "breadcrumb-item")
	w.elem("a", "Home", "href", "/")
	w.close()
	level := 0
	grow(w, t-last, len(levels), func() {
		l := levels[level]
		level++
		w.open("li", "class", "breadcrumb-item")
		w.elem("a", l.name, "href", l.href)
		w.close()
	})
	w.elem("li", pr.title, "class", "breadcrumb-item active", "aria-current", "page")
	w.close()
	w.close()
}

// productCard writes a product card (Bootstrap-like markup), adding the
// rating and swatches when there is room.
func productCard(s *source, w *htmlWriter, t int) {
	pr := s.product()
	id := strconv.Itoa(pr.id)
	slug := string(appendSlug(nil, pr.title))
	w.open("div", "class", "card product-card", "data-product-id", id, "data-sku", pr.sku)
	w.open("a", "href", "/p/"+slug+"-"+id, "class", "product-card__link")
	img := "https://cdn.example.com/products/" + string(s.appendHex(nil, 8)) + "/320x320.webp"
	w.void("img", "src", img, "alt", pr.title, "class", "card-img-top", "loading", "lazy", "width", "320", "height", "320")
	w.close()
	w.open("div", "class", "card-body")
	w.elem("h3", pr.title, "class", "card-title product-card__title")
	w.elem("p", pr.vendor, "class", "card-text product-card__vendor text-muted")
	w.open("p", "class", "product-card__price")
	w.elem("span", "$"+string(appendCents(nil, pr.cents)), "class", "price")
	w.close()
	w.optional(t,
		func() {
			stars := s.between(30, 50)
			label := strconv.Itoa(stars/10) + "." + strconv.Itoa(stars%10) + " out of 5 stars"
			w.open("div", "class", "rating", "aria-label", label)
			w.elem("span", "", "class", "rating__stars", "style", "--rating: "+strconv.Itoa(stars/10)+"."+strconv.Itoa(stars%10))
			w.elem("span", "("+strconv.Itoa(s.between(1, 2400))+")", "class", "rating__count")
			w.close()
		},
		func() {
			swatch := func() {
				c := s.pick(colors)
				w.open("li", "class", "swatch")
				w.elem("button", c, "type", "button", "class", "swatch__button", "data-color", string(appendSlug(nil, c)), "aria-label", c)
				w.close()
			}
			w.open("ul", "class", "swatches")
			swatch()
			grow(w, t, 4, swatch)
			w.close()
		},
		func() {
			w.elem("button", "Add to cart", "type", "button", "class", "btn btn-primary add-to-cart", "data-sku", pr.sku)
		},
	)
	w.close()
	w.close()
}

func productCardHTML(s *source, w *htmlWriter, t int) { productCard(s, w, t) }

// productGridHTML: a section of product cards, such as "Best sellers".
func productGridHTML(s *source, w *htmlWriter, t int) {
	title := s.pick(htmlSections)
	w.open("section", "class", "product-grid", "aria-labelledby", "grid-title")
	w.elem("h2", title, "id", "grid-title", "class", "section-title")
	w.open("div", "class", "row row-cols-2 row-cols-md-4 g-3")
	grow(w, t, 1<<30, func() {
		w.open("div", "class", "col")
		productCard(s, w, w.size()+s.between(380, 700))
		w.close()
	})
	w.close()
	w.close()
}

// comment writes one comment with a paragraph or more of text, up to t.
func comment(s *source, w *htmlWriter, t int) {
	p := s.person()
	user := string(s.appendUsername(nil, p))
	id := strconv.Itoa(s.between(1000000, 9999999))
	at := time.Unix(s.ago(90*86400), 0).UTC()
	w.open("article", "class", "comment", "id", "comment-"+id)
	w.open("header", "class", "comment__header")
	w.void("img", "class", "avatar rounded-circle", "src", "https://cdn.example.com/avatars/"+user+"/40.jpg", "alt", "", "width", "40", "height", "40")
	w.elem("a", p.first+" "+p.last, "class", "comment__author", "href", "/u/"+user)
	w.elem("time", at.Format("Jan 2, 2006"), "datetime", at.Format(time.RFC3339))
	w.close()
	w.open("div", "class", "comment__body")
	para := func() { w.elem("p", string(s.appendProse(nil, 8, 30))) }
	para()
	grow(w, t-205, 3, para)
	w.close()
	w.open("footer", "class", "comment__actions")
	w.elem("button", "Like ("+strconv.Itoa(s.between(0, 40))+")", "type", "button", "class", "btn btn-link btn-sm", "data-action", "like")
	w.elem("button", "Reply", "type", "button", "class", "btn btn-link btn-sm", "data-action", "reply")
	w.close()
	w.close()
}

// commentHTML: one comment, or a thread of them for larger goals.
func commentHTML(s *source, w *htmlWriter, t int) {
	if t < 900 {
		comment(s, w, t)
		return
	}
	w.open("section", "class", "comments", "id", "comments")
	w.elem("h3", strconv.Itoa(s.between(2, 80))+" comments", "class", "comments__title")
	w.open("ol", "class", "comment-list list-unstyled")
	grow(w, t, 1<<30, func() {
		w.open("li", "class", "comment-list__item")
		comment(s, w, w.size()+s.between(450, 800))
		w.close()
	})
	w.close()
	w.close()
}

// orderTableHTML: an order-history table, one row per order.
func orderTableHTML(s *source, w *htmlWriter, t int) {
	w.open("table", "class", "table table-striped orders")
	w.open("thead")
	w.open("tr")
	for _, h := range [...]string{"Order", "Date", "Status", "Items", "Total", ""} {
		w.elem("th", h, "scope", "col")
	}
	w.close()
	w.close()
	w.open("tbody")
	grow(w, t, 1<<30, func() {
		num := strconv.Itoa(s.between(100000, 999999))
		status := s.pick(orderStatuses)
		at := time.Unix(s.ago(365*86400), 0).UTC()
		w.open("tr", "data-order", num)
		w.open("td")
		w.elem("a", "#"+num, "href", "/account/orders/"+num)
		w.close()
		w.elem("td", at.Format("Jan 2, 2006"))
		w.open("td")
		w.elem("span", status, "class", "badge badge-"+status)
		w.close()
		w.open("td")
		w.text(s.product().title)
		if n := s.between(0, 4); n > 0 {
			w.elem("small", " and "+strconv.Itoa(n)+" more", "class", "text-muted")
		}
		w.close()
		w.elem("td", "$"+string(appendCents(nil, s.between(500, 40000))), "class", "text-end")
		w.open("td")
		if status == "shipped" || status == "delivered" {
			track := string(s.appendHex(nil, 6))
			w.elem("a", "Track", "href", "https://track.example.com/?n=1Z"+track, "rel", "noopener", "target", "_blank")
		}
		w.close()
		w.close()
	})
	w.close()
	w.close()
}
