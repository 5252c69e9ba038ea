package corpus

// Vocabulary of the generated restaurant menus (see Menus). Fixed lists,
// like words.go: the output depends only on the random stream.

var weekdays = []string{"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"}

var menuNames = []string{"All Day Menu", "Lunch", "Dinner", "Catering", "Breakfast", "Late Night", "Happy Hour"}

var menuAdjectives = []string{
	"Classic", "Spicy", "Crispy", "Grilled", "Signature", "House", "Smoked", "Garlic", "Honey", "Double",
	"Loaded", "Roasted", "Fresh", "Family Size", "Chef's", "Mini", "Deluxe", "Original",
}

var menuBlurbs = []string{
	"Served with your choice of side", "A customer favorite", "Made fresh to order", "Contains nuts",
	"Available while supplies last", "Pairs well with a cold drink", "Serves 2-3", "Our most popular item",
	"Gluten-free option available", "Limited time only", "Prepared in a kitchen that handles allergens",
}

var dietaryTags = []string{"vegetarian", "vegan", "gluten_free", "spicy", "dairy_free", "halal", "contains_nuts"}

// commonGroups are option groups any restaurant may offer.
var commonGroups = []optionGroup{
	{"Choose a Size", 1, 1, []string{"Small", "Medium", "Large"}},
	{"Add a Drink", 0, 1, []string{"Coca-Cola", "Diet Coke", "Sprite", "Lemonade", "Iced Tea", "Bottled Water"}},
	{"Add a Side", 0, 2, []string{"French Fries", "Side Salad", "Coleslaw", "Onion Rings", "Fruit Cup", "Sweet Potato Fries"}},
	{"Special Instructions", 0, 3, []string{"No Onions", "No Cheese", "Extra Sauce", "Sauce on the Side", "Well Done", "Cut in Half"}},
	{"Utensils", 0, 1, []string{"Include utensils and napkins", "No utensils, please"}},
	{"Make it a Combo", 0, 1, []string{"Regular Combo", "Large Combo"}},
	{"Dipping Sauces", 0, 4, []string{"Ranch", "Honey Mustard", "BBQ Sauce", "Buffalo Sauce", "Sweet and Sour", "Garlic Aioli", "Sriracha Mayo"}},
}

var cuisines = []cuisine{
	{
		name:       "American",
		names:      []string{"The Burger Joint", "Main Street Diner", "Smokehouse BBQ", "Liberty Grill", "Blue Plate Kitchen"},
		categories: []string{"Most Popular", "Starters", "Burgers", "Sandwiches", "Salads", "Chicken", "BBQ Plates", "Sides", "Kids Menu", "Desserts", "Shakes", "Drinks"},
		dishes: []string{"Cheeseburger", "Bacon Burger", "Chicken Sandwich", "Club Sandwich", "Chicken Tenders", "Buffalo Wings",
			"Mac and Cheese", "Cobb Salad", "Caesar Salad", "Pulled Pork Sandwich", "Brisket Plate", "Baby Back Ribs", "Hot Dog",
			"Patty Melt", "BLT", "Philly Cheesesteak", "Onion Rings", "Loaded Fries", "Chocolate Shake", "Apple Pie", "Brownie Sundae"},
		extras: []string{"angus beef patty", "american cheese", "lettuce", "tomato", "pickles", "house sauce", "brioche bun",
			"crispy bacon", "cheddar", "caramelized onions", "smoky bbq sauce", "toasted sesame bun", "coleslaw", "ranch dressing",
			"hand-breaded chicken", "slow-smoked for 12 hours", "jalapeños", "pepper jack", "served with fries", "buttermilk biscuit"},
		groups: []optionGroup{
			{"Choose Your Temperature", 1, 1, []string{"Medium Rare", "Medium", "Medium Well", "Well Done"}},
			{"Add Toppings", 0, 6, []string{"Bacon", "Avocado", "Fried Egg", "Grilled Onions", "Jalapeños", "Extra Cheese", "Mushrooms"}},
			{"Choose Your Cheese", 1, 1, []string{"American", "Cheddar", "Swiss", "Pepper Jack", "Blue Cheese", "No Cheese"}},
			{"Choose Your Bun", 1, 1, []string{"Brioche Bun", "Sesame Bun", "Lettuce Wrap", "Gluten-Free Bun"}},
			{"Choose Your Sauce", 1, 2, []string{"BBQ", "Buffalo", "Honey Mustard", "Ranch", "Blue Cheese", "Ketchup"}},
			{"Choose Your Dressing", 1, 1, []string{"Ranch", "Caesar", "Balsamic Vinaigrette", "Blue Cheese", "Honey Mustard", "Oil and Vinegar"}},
		},
	},
	{
		name:       "Mexican",
		names:      []string{"Taqueria El Sol", "Casa Verde", "La Cocina", "Burrito Bros", "Cantina Azul"},
		categories: []string{"Most Popular", "Tacos", "Burritos", "Bowls", "Quesadillas", "Nachos", "Enchiladas", "Platos", "Sides", "Salsas", "Drinks", "Desserts"},
		dishes: []string{"Carne Asada Burrito", "Al Pastor Tacos", "Chicken Quesadilla", "Carnitas Bowl", "Fish Tacos", "Super Nachos",
			"Chicken Enchiladas", "Veggie Burrito", "Chile Relleno", "Tamales", "Chips and Guacamole", "Elote", "Churros", "Horchata",
			"Birria Tacos", "Torta Cubana", "Steak Fajitas", "Pozole", "Tostada", "Sopes"},
		extras: []string{"grilled steak", "marinated pork", "rice", "pinto beans", "black beans", "pico de gallo", "sour cream",
			"guacamole", "cotija cheese", "salsa verde", "salsa roja", "cilantro", "onions", "flour tortilla", "corn tortillas",
			"chipotle crema", "pickled onions", "lime", "shredded lettuce", "monterey jack"},
		groups: []optionGroup{
			{"Choose Your Protein", 1, 1, []string{"Carne Asada", "Al Pastor", "Carnitas", "Pollo Asado", "Chorizo", "Veggies", "Shrimp"}},
			{"Choose Your Tortilla", 1, 1, []string{"Flour", "Corn", "Whole Wheat", "No Tortilla (Bowl)"}},
			{"Choose Your Beans", 1, 1, []string{"Pinto Beans", "Black Beans", "Refried Beans", "No Beans"}},
			{"Choose Your Salsa", 0, 3, []string{"Mild Pico de Gallo", "Salsa Verde", "Salsa Roja", "Habanero", "Corn Salsa"}},
			{"Extras", 0, 5, []string{"Guacamole", "Sour Cream", "Queso", "Extra Meat", "Jalapeños", "Avocado Slices"}},
			{"Spice Level", 1, 1, []string{"Mild", "Medium", "Hot", "Extra Hot"}},
		},
	},
	{
		name:       "Italian",
		names:      []string{"Trattoria Roma", "Nonna's Kitchen", "Pizzeria Napoli", "Little Italy", "Pasta House"},
		categories: []string{"Most Popular", "Antipasti", "Salads", "Pizza", "Pasta", "Calzones", "Entrees", "Subs", "Sides", "Desserts", "Beverages"},
		dishes: []string{"Margherita Pizza", "Pepperoni Pizza", "Spaghetti and Meatballs", "Fettuccine Alfredo", "Lasagna", "Chicken Parmigiana",
			"Penne alla Vodka", "Eggplant Parmigiana", "Garlic Knots", "Caprese Salad", "Calamari Fritti", "Tiramisu", "Cannoli",
			"Meatball Sub", "Gnocchi al Pesto", "Linguine alle Vongole", "Supreme Pizza", "Bruschetta", "Minestrone", "Arancini"},
		extras: []string{"san marzano tomatoes", "fresh mozzarella", "basil", "parmigiano reggiano", "extra virgin olive oil",
			"garlic", "ricotta", "house-made marinara", "italian sausage", "pecorino", "cream sauce", "oregano", "roasted peppers",
			"baked in our wood-fired oven", "fresh pasta", "pesto", "balsamic glaze", "prosciutto", "mushrooms", "black olives"},
		groups: []optionGroup{
			{"Choose Your Crust", 1, 1, []string{"Thin Crust", "Hand Tossed", "Deep Dish", "Gluten-Free Crust", "Cauliflower Crust"}},
			{"Pizza Size", 1, 1, []string{"Personal 10\"", "Medium 12\"", "Large 14\"", "Extra Large 18\""}},
			{"Add Toppings", 0, 10, []string{"Pepperoni", "Sausage", "Mushrooms", "Onions", "Green Peppers", "Black Olives", "Extra Cheese", "Anchovies", "Pineapple", "Ham"}},
			{"Choose Your Pasta", 1, 1, []string{"Spaghetti", "Penne", "Fettuccine", "Linguine", "Rigatoni", "Gluten-Free Penne"}},
			{"Choose Your Sauce", 1, 1, []string{"Marinara", "Alfredo", "Vodka Sauce", "Pesto", "Garlic and Oil", "Bolognese"}},
			{"Add Protein", 0, 2, []string{"Grilled Chicken", "Meatballs", "Italian Sausage", "Shrimp", "Salmon"}},
		},
	},
	{
		name:       "Chinese",
		names:      []string{"Golden Dragon", "Panda Garden", "Jade Palace", "Szechuan House", "Lucky Star"},
		categories: []string{"Most Popular", "Appetizers", "Soups", "Chicken", "Beef", "Pork", "Seafood", "Vegetables", "Noodles", "Fried Rice", "Combination Plates", "Chef's Specials", "Beverages"},
		dishes: []string{"General Tso's Chicken", "Kung Pao Chicken", "Orange Chicken", "Beef and Broccoli", "Mongolian Beef", "Sweet and Sour Pork",
			"Shrimp Lo Mein", "Chicken Chow Mein", "Pork Fried Rice", "Egg Rolls", "Crab Rangoon", "Hot and Sour Soup", "Wonton Soup",
			"Ma Po Tofu", "Dan Dan Noodles", "Walnut Shrimp", "Sesame Chicken", "Szechuan Green Beans", "Pot Stickers", "Char Siu"},
		extras: []string{"wok-fried", "scallions", "dried chilies", "peanuts", "garlic sauce", "ginger", "broccoli", "snow peas",
			"water chestnuts", "bell peppers", "sweet and tangy sauce", "white rice", "soy glaze", "bok choy", "sesame seeds",
			"Szechuan peppercorns", "egg noodles", "bean sprouts", "carrots", "brown sauce"},
		groups: []optionGroup{
			{"Choose Your Rice", 1, 1, []string{"Steamed White Rice", "Brown Rice", "Fried Rice (+$2)", "No Rice"}},
			{"Spice Level", 1, 1, []string{"Mild", "Medium", "Spicy", "Extra Spicy"}},
			{"Choose Your Protein", 1, 1, []string{"Chicken", "Beef", "Pork", "Shrimp", "Tofu", "Combination"}},
			{"Add Extra", 0, 4, []string{"Extra Meat", "Extra Vegetables", "Extra Sauce", "Egg Roll", "Spring Roll", "Crab Rangoon"}},
			{"Choose Your Soup", 1, 1, []string{"Wonton Soup", "Egg Drop Soup", "Hot and Sour Soup"}},
		},
	},
	{
		name:       "Japanese",
		names:      []string{"Sakura Sushi", "Tokyo Ramen", "Koi Japanese Kitchen", "Umami Bar", "Izakaya Kaze"},
		categories: []string{"Most Popular", "Starters", "Ramen", "Nigiri", "Sashimi", "Classic Rolls", "Special Rolls", "Bento Boxes", "Donburi", "Teriyaki", "Sides", "Drinks"},
		dishes: []string{"Tonkotsu Ramen", "Spicy Miso Ramen", "California Roll", "Spicy Tuna Roll", "Dragon Roll", "Rainbow Roll",
			"Salmon Nigiri", "Chicken Teriyaki", "Beef Gyudon", "Chicken Katsu", "Edamame", "Gyoza", "Miso Soup", "Seaweed Salad",
			"Shrimp Tempura", "Unagi Don", "Chirashi Bowl", "Takoyaki", "Karaage", "Salmon Poke Bowl"},
		extras: []string{"rich pork broth", "chashu pork", "soft-boiled egg", "nori", "bamboo shoots", "green onion", "sushi rice",
			"fresh salmon", "yellowtail", "avocado", "cucumber", "spicy mayo", "eel sauce", "tempura flakes", "masago",
			"sesame", "pickled ginger", "wasabi", "teriyaki glaze", "panko-crusted"},
		groups: []optionGroup{
			{"Choose Your Broth", 1, 1, []string{"Tonkotsu", "Shoyu", "Miso", "Spicy Miso", "Vegetable"}},
			{"Ramen Toppings", 0, 6, []string{"Extra Chashu", "Ajitama Egg", "Corn", "Butter", "Extra Noodles", "Kikurage Mushrooms", "Nori"}},
			{"Spice Level", 1, 1, []string{"No Spice", "Mild", "Medium", "Hot"}},
			{"Rice Choice", 1, 1, []string{"Sushi Rice", "Brown Rice", "Soy Paper Wrap", "No Rice"}},
			{"Make it Crunchy", 0, 2, []string{"Tempura Flakes", "Crispy Onions", "Masago", "Sesame Seeds"}},
		},
	},
	{
		name:       "Indian",
		names:      []string{"Taj Mahal", "Curry House", "Spice Route", "Bombay Kitchen", "Masala Grill"},
		categories: []string{"Most Popular", "Appetizers", "Tandoori", "Chicken Entrees", "Lamb Entrees", "Seafood", "Vegetarian", "Biryani", "Breads", "Sides", "Desserts", "Drinks"},
		dishes: []string{"Chicken Tikka Masala", "Butter Chicken", "Lamb Vindaloo", "Chicken Biryani", "Saag Paneer", "Chana Masala",
			"Garlic Naan", "Vegetable Samosa", "Tandoori Chicken", "Palak Paneer", "Dal Makhani", "Lamb Rogan Josh", "Aloo Gobi",
			"Mango Lassi", "Gulab Jamun", "Onion Bhaji", "Chicken Korma", "Malai Kofta", "Shrimp Curry", "Paneer Tikka"},
		extras: []string{"creamy tomato sauce", "basmati rice", "fenugreek", "garam masala", "ginger", "garlic", "fresh spinach",
			"cottage cheese", "chickpeas", "yogurt marinade", "clay oven", "cashew cream", "cumin", "turmeric", "cilantro",
			"green chilies", "saffron", "coconut milk", "mint chutney", "tamarind chutney"},
		groups: []optionGroup{
			{"Spice Level", 1, 1, []string{"Mild", "Medium", "Hot", "Indian Hot"}},
			{"Choose Your Bread", 0, 2, []string{"Plain Naan", "Garlic Naan", "Butter Naan", "Roti", "Paratha", "Cheese Naan"}},
			{"Choose Your Rice", 1, 1, []string{"Basmati Rice", "Jeera Rice", "Brown Rice", "No Rice"}},
			{"Choose Your Protein", 1, 1, []string{"Chicken", "Lamb", "Goat", "Shrimp", "Paneer", "Vegetables"}},
			{"Add a Chutney", 0, 3, []string{"Mint Chutney", "Tamarind Chutney", "Mango Chutney", "Raita", "Mixed Pickle"}},
		},
	},
	{
		name:       "Thai",
		names:      []string{"Thai Orchid", "Bangkok Street", "Siam Kitchen", "Lotus Thai", "Basil Leaf"},
		categories: []string{"Most Popular", "Appetizers", "Soups", "Salads", "Curries", "Noodles", "Fried Rice", "Stir Fry", "Chef's Specials", "Sides", "Desserts", "Drinks"},
		dishes: []string{"Pad Thai", "Pad See Ew", "Drunken Noodles", "Green Curry", "Red Curry", "Massaman Curry", "Panang Curry",
			"Tom Yum Soup", "Tom Kha Soup", "Thai Fried Rice", "Pineapple Fried Rice", "Basil Chicken", "Spring Rolls", "Chicken Satay",
			"Papaya Salad", "Larb", "Mango Sticky Rice", "Thai Iced Tea", "Cashew Chicken", "Garlic Pepper Shrimp"},
		extras: []string{"rice noodles", "bean sprouts", "crushed peanuts", "egg", "tofu", "thai basil", "coconut milk", "bamboo shoots",
			"bell peppers", "kaffir lime", "lemongrass", "galangal", "fish sauce", "palm sugar", "jasmine rice", "chili paste",
			"green beans", "onions", "cashews", "lime wedge"},
		groups: []optionGroup{
			{"Choose Your Protein", 1, 1, []string{"Chicken", "Beef", "Pork", "Tofu", "Shrimp", "Seafood Combo", "Vegetables"}},
			{"Spice Level", 1, 1, []string{"Not Spicy", "Mild", "Medium", "Thai Hot"}},
			{"Choose Your Rice", 0, 1, []string{"Jasmine Rice", "Brown Rice", "Sticky Rice", "Fried Rice"}},
			{"Add Extra", 0, 4, []string{"Extra Protein", "Extra Vegetables", "Extra Peanuts", "Fried Egg", "Extra Sauce"}},
		},
	},
	{
		name:       "Breakfast & Cafe",
		names:      []string{"Sunrise Cafe", "The Morning Table", "Daily Grind", "Egg & Toast", "Corner Bakery Cafe"},
		categories: []string{"Most Popular", "Coffee", "Espresso Drinks", "Tea", "Breakfast Sandwiches", "Omelettes", "Pancakes & Waffles", "Bowls", "Pastries", "Bagels", "Smoothies", "Lunch"},
		dishes: []string{"Latte", "Cappuccino", "Cold Brew", "Avocado Toast", "Bacon Egg and Cheese", "Breakfast Burrito", "Denver Omelette",
			"Buttermilk Pancakes", "Belgian Waffle", "Acai Bowl", "Blueberry Muffin", "Butter Croissant", "Everything Bagel",
			"Chai Latte", "Matcha Latte", "Strawberry Banana Smoothie", "Turkey Club", "Quiche Lorraine", "French Toast", "Granola Parfait"},
		extras: []string{"espresso", "steamed milk", "cage-free eggs", "sourdough", "hash browns", "maple syrup", "fresh berries",
			"whipped cream", "cream cheese", "smoked salmon", "granola", "honey", "oat milk", "cheddar", "applewood bacon",
			"chicken sausage", "sautéed spinach", "everything seasoning", "house-made jam", "roasted potatoes"},
		groups: []optionGroup{
			{"Choose Your Milk", 1, 1, []string{"Whole Milk", "2% Milk", "Skim Milk", "Oat Milk", "Almond Milk", "Soy Milk", "Coconut Milk"}},
			{"Add a Shot", 0, 3, []string{"Extra Espresso Shot", "Decaf Shot", "Half-Caf"}},
			{"Flavor Syrup", 0, 2, []string{"Vanilla", "Caramel", "Hazelnut", "Mocha", "Sugar-Free Vanilla", "Lavender"}},
			{"Choose Your Bread", 1, 1, []string{"Sourdough", "Whole Wheat", "Rye", "English Muffin", "Bagel", "Croissant", "Gluten-Free"}},
			{"How Would You Like Your Eggs", 1, 1, []string{"Scrambled", "Over Easy", "Over Medium", "Over Hard", "Sunny Side Up", "Poached"}},
			{"Temperature", 1, 1, []string{"Hot", "Iced", "Extra Hot"}},
		},
	},
}
