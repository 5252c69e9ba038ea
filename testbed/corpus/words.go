package corpus

// Word lists for the generated documents. They are small on purpose: real
// payloads draw names, statuses and categories from small vocabularies, and
// that repetition is part of why they compress. All entries are fixed, so
// the output depends only on the random stream.

var firstNames = []string{
	"James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda",
	"David", "Elizabeth", "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica",
	"Thomas", "Sarah", "Daniel", "Karen", "Matthew", "Nancy", "Anthony", "Lisa",
	"Mark", "Emily", "Paul", "Ashley", "Kevin", "Emma", "Brian", "Olivia",
	"Wei", "Priya", "Hiroshi", "Fatima", "Carlos", "Sofia", "Lukas", "Chloé",
	"Mateo", "Aisha", "Noah", "Ingrid", "Omar", "Yuki", "Diego", "Zoë",
}

var lastNames = []string{
	"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
	"Rodriguez", "Martinez", "Hernandez", "Lopez", "Wilson", "Anderson", "Thomas", "Taylor",
	"Moore", "Jackson", "Martin", "Lee", "Thompson", "White", "Harris", "Clark",
	"Nguyen", "Patel", "Kim", "Chen", "Müller", "Schmidt", "Rossi", "Kowalski",
	"Tanaka", "Silva", "Dubois", "Novak", "Jensen", "O'Brien", "Haddad", "Okafor",
}

var emailDomains = []string{
	"gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "icloud.com",
	"proton.me", "fastmail.com", "example.com", "acme.io", "company.org",
}

var cities = []struct{ city, region, country, zip, tz string }{
	{"New York", "NY", "US", "10001", "America/New_York"},
	{"San Francisco", "CA", "US", "94107", "America/Los_Angeles"},
	{"Austin", "TX", "US", "78701", "America/Chicago"},
	{"Seattle", "WA", "US", "98101", "America/Los_Angeles"},
	{"Chicago", "IL", "US", "60601", "America/Chicago"},
	{"Toronto", "ON", "CA", "M5V 2T6", "America/Toronto"},
	{"London", "ENG", "GB", "EC1A 1BB", "Europe/London"},
	{"Berlin", "BE", "DE", "10115", "Europe/Berlin"},
	{"Paris", "IDF", "FR", "75002", "Europe/Paris"},
	{"Madrid", "MD", "ES", "28013", "Europe/Madrid"},
	{"Amsterdam", "NH", "NL", "1012 JS", "Europe/Amsterdam"},
	{"Stockholm", "AB", "SE", "111 52", "Europe/Stockholm"},
	{"Tokyo", "13", "JP", "100-0005", "Asia/Tokyo"},
	{"Singapore", "SG", "SG", "018956", "Asia/Singapore"},
	{"Sydney", "NSW", "AU", "2000", "Australia/Sydney"},
	{"São Paulo", "SP", "BR", "01310-100", "America/Sao_Paulo"},
}

var streetNames = []string{
	"Main St", "Oak Ave", "Maple Dr", "Cedar Ln", "Park Blvd", "Elm St", "Washington Ave",
	"Lake View Rd", "Hillside Way", "Market St", "Church Rd", "High St", "Station Rd", "Mill Ln",
}

var locales = []string{"en-US", "en-GB", "de-DE", "fr-FR", "es-ES", "ja-JP", "pt-BR", "nl-NL", "sv-SE", "it-IT"}

var currencies = []string{"USD", "USD", "USD", "EUR", "EUR", "GBP", "CAD", "JPY", "AUD"}

var productAdjectives = []string{
	"Classic", "Organic", "Wireless", "Vintage", "Ergonomic", "Compact", "Premium", "Waterproof",
	"Lightweight", "Handmade", "Stainless", "Recycled", "Portable", "Smart", "Slim", "Deluxe",
}

var productNouns = []string{
	"Backpack", "Coffee Grinder", "Desk Lamp", "Running Shoes", "Water Bottle", "Headphones",
	"Yoga Mat", "Chef Knife", "Throw Blanket", "Phone Case", "Notebook", "Sunglasses",
	"Wall Clock", "Bluetooth Speaker", "Cotton T-Shirt", "Denim Jacket", "Tea Kettle", "Plant Pot",
}

var productCategories = []struct{ slug, name string }{
	{"home-garden", "Home & Garden"}, {"electronics", "Electronics"}, {"apparel", "Apparel"},
	{"kitchen", "Kitchen"}, {"outdoor", "Outdoor"}, {"beauty", "Beauty"}, {"toys", "Toys"},
	{"office", "Office"}, {"sports", "Sports"}, {"books", "Books"},
}

var colors = []string{"Black", "White", "Navy", "Forest Green", "Charcoal", "Sand", "Red", "Sky Blue", "Olive"}

var apparelSizes = []string{"XS", "S", "M", "L", "XL", "One Size"}

var vendors = []string{"Northwind", "Acme Goods", "Blue Harbor", "Fieldcraft", "Lumen & Co", "Tandem Supply", "Oakridge"}

var orderStatuses = []string{"pending", "paid", "processing", "shipped", "delivered", "cancelled", "refunded"}

var cardBrands = []string{"visa", "mastercard", "amex", "discover"}

var tags = []string{
	"new", "sale", "bestseller", "gift", "eco", "limited", "clearance", "vip",
	"wholesale", "repeat-customer", "priority", "backorder",
}

var roles = []string{"customer", "member", "editor", "admin", "support", "billing", "viewer", "owner"}

var plans = []string{"free", "starter", "pro", "business", "enterprise"}

var themes = []string{"light", "dark", "system"}

var repoNames = []string{
	"api-gateway", "web-frontend", "billing-service", "infra", "docs", "mobile-app", "data-pipeline",
	"auth-server", "design-system", "cli", "terraform-modules", "search-indexer",
}

var commitVerbs = []string{"Fix", "Add", "Update", "Remove", "Refactor", "Bump", "Improve", "Handle", "Document", "Revert"}

var commitObjects = []string{
	"retry logic for webhook delivery", "pagination in list endpoint", "flaky integration test",
	"dependency versions", "null check in session middleware", "README install steps",
	"rate limiter configuration", "typo in error message", "CI cache key", "timezone handling in reports",
	"memory leak in worker pool", "support for dark mode", "validation for email field",
}

var branches = []string{"main", "main", "main", "develop", "release/2.4", "feature/checkout-v2", "fix/login-redirect"}

var flashMessages = []string{
	"Item added to your cart.", "Your changes have been saved.", "Welcome back!",
	"Please verify your email address.", "Your password was updated successfully.",
	"Coupon SAVE10 applied.", "Your session is about to expire.", "Address removed.",
}

var paths = []string{
	"/", "/cart", "/checkout", "/account", "/account/orders", "/search", "/products",
	"/blog", "/help", "/wishlist", "/c/electronics", "/c/home-garden", "/c/apparel",
}

var referrers = []string{
	"https://www.google.com/", "https://duckduckgo.com/", "https://www.bing.com/",
	"https://t.co/", "https://www.facebook.com/", "", "",
}

var userAgents = []string{
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15",
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36",
	"Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36 Edg/123.0.2420.81",
	"Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:124.0) Gecko/20100101 Firefox/124.0",
}

// proseWords feeds reviews, comments, bios and commit messages: common
// English words, so text compresses like real short prose (word reuse,
// letter skew) rather than like random letters.
var proseWords = []string{
	"the", "the", "the", "a", "a", "and", "and", "to", "to", "of", "is", "it", "it", "for", "in", "this",
	"that", "with", "was", "on", "my", "but", "not", "very", "so", "you", "have", "are", "be", "as",
	"great", "good", "really", "quality", "price", "works", "fast", "shipping", "arrived", "would",
	"recommend", "again", "after", "week", "day", "use", "using", "well", "easy", "love", "nice",
	"little", "small", "bigger", "expected", "perfect", "size", "color", "product", "order", "time",
	"just", "also", "than", "more", "much", "one", "two", "only", "still", "like", "looks", "feels",
	"team", "update", "issue", "fixed", "thanks", "new", "version", "problem", "support", "help",
	"customer", "service", "months", "first", "best", "could", "better", "bit", "however", "overall",
	"happy", "return", "box", "packaging", "battery", "sound", "fit", "comfortable", "cheap", "solid",
}

// htmlSections are headings for groups of HTML cards.
var htmlSections = []string{
	"New arrivals", "Best sellers", "Recommended for you", "Recently viewed", "On sale",
	"Customer reviews", "Related products", "Top picks this week",
}
