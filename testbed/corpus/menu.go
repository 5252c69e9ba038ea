package corpus

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
)

// The size range of DoorDash's sample of 10,000 restaurant menus ("menu
// sizes ranging from 9.5KB – 709KB when serialized"), in bytes.
const (
	MenuMinSize = 9_500
	MenuMaxSize = 709_000
)

// menuSizes are 65 quantiles, in bytes, of the menus' size distribution:
// a log-normal with median 48,000 B and sigma 0.9, truncated to
// [MenuMinSize, MenuMaxSize] (computed once offline, like sizeSpread).
// Most menus are tens of KB, one in ten is over 150 KB and a few are
// hundreds; the mean is about 75 KB, so 10,000 menus hold about 750 MB.
var menuSizes = [65]int{
	9500, 11016, 12376, 13641, 14843, 16003, 17134, 18245, 19342, 20432, 21519, 22606, 23697, 24795, 25901, 27019,
	28150, 29297, 30462, 31646, 32853, 34084, 35341, 36626, 37942, 39291, 40676, 42100, 43565, 45075, 46633, 48243,
	49908, 51634, 53426, 55288, 57227, 59249, 61362, 63574, 65896, 68336, 70909, 73628, 76510, 79573, 82841, 86340,
	90102, 94165, 98577, 103397, 108698, 114575, 121153, 128597, 137138, 147105, 158994, 173594, 192265, 217651,
	255917, 327553, 709000,
}

// menuSize returns the size goal of the menu of the given rank among n:
// rank 0 is MenuMinSize, rank n-1 MenuMaxSize, and the ranks between
// follow menuSizes, interpolated linearly in integers.
func menuSize(rank, n int) int {
	if n < 2 {
		return menuSizes[len(menuSizes)/2]
	}
	k := len(menuSizes) - 1
	pos := rank * k // position in units of 1/(n-1) of a quantile step
	i, frac := pos/(n-1), pos%(n-1)
	if i >= k {
		return menuSizes[k]
	}
	return menuSizes[i] + (menuSizes[i+1]-menuSizes[i])*frac/(n-1)
}

// menuSlack is how far a menu can end from its size goal: about half of
// the largest item.
const menuSlack = 2000

// menuSalt separates the menus' random streams from the classes'.
const menuSalt = 0x6d656e75d00dd45

// Menus returns n restaurant menus, serialized as JSON the way a delivery
// app caches them (store, menus, categories, items with prices, images and
// option groups), with sizes spread from MenuMinSize to MenuMaxSize like
// DoorDash's sample: the smallest is about MenuMinSize, the largest about
// MenuMaxSize, and the rest follow menuSizes, in an order shuffled by
// seed. The result depends only on n and seed. Menus are built on every
// processor at once; 10,000 take a few seconds. It panics if n < 0.
func Menus(n int, seed int64) [][]byte {
	if n < 0 {
		panic("corpus: negative count")
	}
	rank := rand.New(rand.NewPCG(uint64(seed), menuSalt)).Perm(n)
	docs := make([][]byte, n)
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), max(n, 1))
	for w := range workers {
		wg.Go(func() {
			var mw menuWriter
			for i := w; i < n; i += workers {
				// A menu ends within about an item of its goal, so the
				// goals keep that far from the range's ends.
				goal := min(max(menuSize(rank[i], n), MenuMinSize+menuSlack), MenuMaxSize-menuSlack)
				docs[i] = mw.build(seed, uint64(i), goal)
			}
		})
	}
	wg.Wait()
	return docs
}

// Menu returns one menu of about size bytes, made from seed, for checking
// how menus of a given size compress. It is not one of Menus' documents.
func Menu(size int, seed int64) []byte {
	var mw menuWriter
	return mw.build(seed, 1<<40|uint64(size), size)
}

// menuWriter builds menus one after another, reusing its buffers.
type menuWriter struct {
	src source
	w   jsonWriter
}

// build returns a new menu of about goal bytes from the stream (seed,
// stream).
func (m *menuWriter) build(seed int64, stream uint64, goal int) []byte {
	s := &m.src
	s.r = rand.New(rand.NewPCG(uint64(seed), menuSalt^stream*0x9e3779b97f4a7c15))
	s.newNow()
	m.w.reset(m.w.b)
	buildMenu(s, &m.w, goal)
	out := make([]byte, len(m.w.b))
	copy(out, m.w.b)
	return out
}

// cuisine is the vocabulary of one kind of restaurant.
type cuisine struct {
	name       string
	names      []string // restaurant names
	categories []string
	dishes     []string
	extras     []string // ingredients and preparations for descriptions
	groups     []optionGroup
}

// optionGroup is a modifier group such as "Choose a Size": restaurants
// reuse a handful of them across many items, and a menu repeats each group
// in full under every item that offers it, which is much of why menus
// compress so well.
type optionGroup struct {
	name     string
	min, max int
	options  []string
}

// menuStore is what one menu's items share.
type menuStore struct {
	c      *cuisine
	groups []menuGroup
	itemID int
	// prose is the chance, in percent, that an item's description has a
	// sentence of prose (of up to proseWords words) besides its
	// ingredients. Big menus belong to big chains, with wordier
	// descriptions and fewer modifiers per item, so they compress less
	// well than small ones, as in DoorDash's examples.
	prose, proseWords int
	// extras is the most ingredients a description lists after the first.
	extras int
	// maxGroups is the most option groups an item offers.
	maxGroups int
}

// menuGroup is an option group as one store serves it, with its prices
// and default fixed.
type menuGroup struct {
	g       *optionGroup
	prices  []int // cents added by each option
	popular int   // index of the default option, or -1
}

// buildMenu writes one store's menu of about t bytes: the store, then one
// or more menus (lunch, dinner, catering...) of categories, of items.
// Categories share the size left evenly, so every category has items.
func buildMenu(s *source, w *jsonWriter, t int) {
	c := &cuisines[s.intn(len(cuisines))]
	st := menuStore{c: c, itemID: s.between(100_000_000, 900_000_000),
		prose: min(t/5_000, 90), proseWords: 8 + t/25_000, extras: 4 + t/100_000, maxGroups: max(5-t/100_000, 2)}
	// Bigger menus use more of the cuisine's groups: a small cafe has a
	// few modifiers, a chain with hundreds of items many.
	pool := len(c.groups) + len(commonGroups)
	for _, gi := range s.r.Perm(pool)[:min(pool, 3+t/25_000)] {
		var g *optionGroup
		if gi < len(c.groups) {
			g = &c.groups[gi]
		} else {
			g = &commonGroups[gi-len(c.groups)]
		}
		mg := menuGroup{g: g, popular: -1}
		for range g.options {
			mg.prices = append(mg.prices, [...]int{0, 0, 0, 50, 75, 100, 150, 200, 250, 300}[s.intn(10)])
		}
		if g.min > 0 {
			mg.popular = s.intn(len(g.options))
			mg.prices[mg.popular] = 0
		}
		st.groups = append(st.groups, mg)
	}

	w.obj()
	storeJSON(s, w, &st)
	menus := 1 + t/200_000
	// Categories per menu: a handful for a small menu, up to the cuisine's
	// whole list.
	cats := min(len(c.categories), max(3, t/menus/7_000))
	w.karr("menus")
	for mi := range menus {
		w.obj()
		w.kint("id", int64(s.between(1_000_000, 9_999_999)))
		w.kstr("name", menuNames[(mi+s.intn(2))%len(menuNames)])
		w.kstr("subtitle", [...]string{"11:00 am - 3:00 pm", "4:00 pm - 10:00 pm", "All day", "7:00 am - 11:00 am"}[s.intn(4)])
		w.kbool("is_catering", mi > 0 && s.chance(30))
		w.karr("categories")
		first := s.intn(len(c.categories))
		for ci := range cats {
			// Each category grows to its share of what is left.
			left := cats*menus - (mi*cats + ci)
			share := w.size() + (t-menuTail-w.size())/left
			categoryJSON(s, w, &st, c.categories[(first+ci)%len(c.categories)], ci, share)
		}
		w.endArr()
		w.endObj()
	}
	w.endArr()
	w.kts(s, "updated_at", s.ago(30*86400))
	w.endObj()
}

// menuTail is what closes the document after the last category: the
// menus' closing brackets and "updated_at".
const menuTail = 40

// storeJSON writes the store's header: name, address, hours, fees.
func storeJSON(s *source, w *jsonWriter, st *menuStore) {
	city := cities[s.intn(6)] // the US and Canadian ones
	name := s.pick(st.c.names)
	id := s.between(100_000, 9_999_999)
	w.kobj("store")
	w.kint("id", int64(id))
	w.kstr("name", name)
	s.tmp = appendSlug(s.tmp[:0], name+" "+city.city)
	s.tmp = strconv.AppendInt(append(s.tmp, '-'), int64(id), 10)
	w.kstrb("slug", s.tmp)
	w.kint("business_id", int64(s.between(10_000, 999_999)))
	w.kstr("cuisine", st.c.name)
	w.kint("price_range", int64(s.between(1, 3)))
	w.key("average_rating")
	w.dec(s.between(38, 49), 1)
	w.kint("num_ratings", int64(s.between(50, 9000)))
	s.tmp = strconv.AppendInt(append(s.tmp[:0], "+1"...), int64(s.between(2_000_000_000, 9_899_999_999)), 10)
	w.kstrb("phone", s.tmp)
	w.kobj("address")
	s.tmp = strconv.AppendInt(s.tmp[:0], int64(s.between(1, 9999)), 10)
	s.tmp = append(append(s.tmp, ' '), s.pick(streetNames)...)
	w.kstrb("street", s.tmp)
	w.kstr("city", city.city)
	w.kstr("state", city.region)
	w.kstr("zip_code", city.zip)
	w.kstr("country_code", city.country)
	w.endObj()
	w.kobj("delivery_fee")
	priceFields(w, s, [...]int{0, 99, 199, 299, 399}[s.intn(5)])
	w.endObj()
	w.kint("asap_minutes", int64(s.between(15, 55)))
	w.karr("hours")
	open, closeAt := [...]string{"07:00", "10:30", "11:00"}[s.intn(3)], [...]string{"21:00", "22:00", "23:30"}[s.intn(3)]
	for _, d := range weekdays {
		w.obj()
		w.kstr("day_of_week", d)
		w.kstr("open", open)
		w.kstr("close", closeAt)
		w.endObj()
	}
	w.endArr()
	w.endObj()
}

// categoryJSON writes one category with items while the document is short
// of t.
func categoryJSON(s *source, w *jsonWriter, st *menuStore, name string, order, t int) {
	w.obj()
	w.kint("id", int64(s.between(10_000_000, 99_999_999)))
	w.kstr("name", name)
	w.kint("sort_order", int64(order))
	w.list(t, "items", 1, 1<<30, func() { itemJSON(s, w, st) })
	w.endObj()
}

// itemJSON writes one menu item. What varies per item (its id, name,
// description, price, image and ratings) is what stops a menu from
// compressing further; its option groups repeat the store's.
func itemJSON(s *source, w *jsonWriter, st *menuStore) {
	c := st.c
	st.itemID += s.between(1, 40)
	w.obj()
	w.kint("id", int64(st.itemID))
	dish := s.pick(c.dishes)
	if s.chance(50) {
		dish = s.pick(menuAdjectives) + " " + dish
	}
	if s.chance(st.prose / 2) {
		dish += " with " + s.pick(c.extras)
	}
	w.kstr("name", dish)
	s.tmp = append(s.tmp[:0], s.pick(c.extras)...)
	for n := s.between(1, st.extras); n > 0; n-- {
		s.tmp = append(s.tmp, ", "...)
		s.tmp = append(s.tmp, s.pick(c.extras)...)
	}
	if s.chance(st.prose) {
		s.tmp = s.appendProse(append(s.tmp, ". "...), 6, st.proseWords)
		s.tmp = s.tmp[:len(s.tmp)-1] // the period comes below
	}
	if s.chance(30) {
		s.tmp = append(s.tmp, ". "...)
		s.tmp = append(s.tmp, s.pick(menuBlurbs)...)
	}
	if len(s.tmp) > 0 && s.tmp[0] >= 'a' && s.tmp[0] <= 'z' {
		s.tmp[0] -= 'a' - 'A'
	}
	s.tmp = append(s.tmp, '.')
	w.kstrb("description", s.tmp)
	w.kobj("price")
	priceFields(w, s, 100*s.between(3, 28)+[...]int{0, 25, 49, 50, 95, 99}[s.intn(6)])
	w.endObj()
	if s.chance(70) {
		s.tmp = append(s.tmp[:0], "https://img.cdn4dd.com/p/fit=cover,width=1200,height=672,format=auto,quality=50/media/photosV2/"...)
		s.tmp = append(s.appendUUID(s.tmp), "-retina-large.jpg"...)
		w.kstrb("image_url", s.tmp)
	}
	s.tmp = strconv.AppendInt(s.tmp[:0], int64(10*s.between(12, 140)), 10)
	w.kstrb("calories_display", append(s.tmp, " cal"...))
	w.kbool("is_popular", s.chance(15))
	w.kbool("is_active", s.chance(97))
	w.list(0, "dietary_tags", s.between(0, 1), 2, func() { w.str(s.pick(dietaryTags)) })
	if s.chance(60) {
		w.kobj("rating")
		w.kint("percent", int64(s.between(80, 100)))
		w.kint("count", int64(s.between(3, 900)))
		w.endObj()
	}
	if len(st.groups) > 0 {
		w.karr("option_groups")
		// A few of the store's groups, in the store's order.
		first, n := s.intn(len(st.groups)), s.between(1, min(st.maxGroups, len(st.groups)))
		for k := range n {
			optionGroupJSON(s, w, &st.groups[(first+k)%len(st.groups)])
		}
		w.endArr()
	}
	w.endObj()
}

// optionGroupJSON writes a group as an item offers it: the store's names
// and prices, under ids of the item's own (numbered in sequence), as menu
// APIs number each item's copy of a group.
func optionGroupJSON(s *source, w *jsonWriter, mg *menuGroup) {
	id := s.between(100_000_000, 999_999_000)
	w.obj()
	w.kint("id", int64(id))
	w.kstr("name", mg.g.name)
	w.kint("min_num_options", int64(mg.g.min))
	w.kint("max_num_options", int64(mg.g.max))
	w.kbool("is_optional", mg.g.min == 0)
	w.karr("options")
	for i, o := range mg.g.options {
		w.obj()
		w.kint("id", int64(id+1+i))
		w.kstr("name", o)
		w.kobj("price")
		w.kint("unit_amount", int64(mg.prices[i]))
		w.kstr("currency", "USD")
		w.endObj()
		w.kbool("default", i == mg.popular)
		w.endObj()
	}
	w.endArr()
	w.endObj()
}

// priceFields writes a DoorDash-style money object's fields.
func priceFields(w *jsonWriter, s *source, cents int) {
	w.kint("unit_amount", int64(cents))
	w.kstr("currency", "USD")
	s.tmp = appendCents(append(s.tmp[:0], '$'), cents)
	w.kstrb("display_string", s.tmp)
	w.kint("decimal_places", 2)
}
