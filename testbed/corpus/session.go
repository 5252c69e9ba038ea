package corpus

import (
	"encoding/base64"
	"strconv"
)

// buildSession writes one session payload of about t bytes in the format
// connect-redis gives express-session data: JSON.stringify of the session
// object, a "cookie" object first, then whatever the application stored.
// Small sessions are little more than the cookie, a CSRF secret and the
// logged-in user; larger ones add the user agent, OAuth tokens (an ES256
// JWT among them), flash messages, a cart and recently viewed products.
// Tokens are random base64url, so they resist compression as real ones do.
func buildSession(s *source, w *jsonWriter, t int) {
	maxAge := [...]int64{86400000, 604800000, 1209600000, 2592000000}[s.intn(4)]
	userID := s.between(100000, 99999999)
	w.obj()
	w.kobj("cookie")
	w.kint("originalMaxAge", maxAge)
	s.tmp = s.appendISOms(s.tmp[:0], s.now+maxAge/1000)
	w.kstrb("expires", s.tmp)
	w.kbool("secure", s.chance(80))
	w.kbool("httpOnly", true)
	w.kstr("path", "/")
	if s.chance(60) {
		w.kstr("sameSite", [...]string{"lax", "strict"}[s.intn(2)])
	}
	w.endObj()
	s.tmp = s.appendToken(s.tmp[:0], 18)
	w.kstrb("csrfSecret", s.tmp)
	w.optional(t,
		func() {
			w.kobj("passport")
			w.kint("user", int64(userID))
			w.endObj()
		},
		func() {
			if s.chance(70) {
				w.kstr("locale", s.pick(locales))
			}
		},
		func() {
			w.kint("lastSeen", (s.now-int64(s.between(0, 3600)))*1000+int64(s.intn(1000)))
		},
		func() {
			if s.chance(60) {
				w.karr("roles")
				w.str("customer")
				if s.chance(20) {
					w.str(s.pick(roles))
				}
				w.endArr()
			}
		},
		func() { w.kstr("userAgent", s.pick(userAgents)) },
		func() { s.tmp = s.appendIP(s.tmp[:0]); w.kstrb("ip", s.tmp) },
		func() {
			if s.chance(40) {
				s.tmp = append(append(s.tmp[:0], s.pick(paths)...), "?ref="...)
				s.tmp = s.appendBase62(s.tmp, 8)
				w.kstrb("returnTo", s.tmp)
			}
		},
		func() {
			if s.chance(75) {
				sessionOAuth(s, w, userID)
			}
		},
		func() {
			if s.chance(50) {
				w.kobj("flash")
				w.list(t, [...]string{"info", "success", "error"}[s.intn(3)], 1, s.between(1, 2), func() { w.str(s.pick(flashMessages)) })
				w.endObj()
			}
		},
		func() {
			if s.chance(40) {
				w.kobj("mfa")
				w.kstr("method", [...]string{"totp", "sms", "webauthn"}[s.intn(3)])
				w.kbool("verified", true)
				w.kint("at", s.ago(3600)*1000)
				w.endObj()
			}
		},
		func() {
			w.kobj("cart")
			w.kuuid(s, "id")
			w.kstr("currency", s.pick(currencies))
			w.list(t, "items", 1, 8, func() {
				pr := s.product()
				w.obj()
				w.kstr("sku", pr.sku)
				w.kint("qty", int64(s.between(1, 3)))
				w.kint("price", int64(pr.cents))
				w.kint("addedAt", s.ago(86400)*1000)
				w.endObj()
			})
			w.endObj()
		},
	)
	w.list(t, "recentlyViewed", 0, 1<<30, func() { w.int(int64(s.between(10000, 999999))) })
	w.endObj()
}

// sessionOAuth writes the tokens an OpenID Connect login (passport or
// openid-client) leaves in a session: an opaque access token, a refresh
// token and a signed ID token.
func sessionOAuth(s *source, w *jsonWriter, userID int) {
	// Token prefixes as the providers issue them; the rest is opaque.
	providers := [...]struct{ name, access, refresh string }{
		{"google", "ya29.", "1//0"},
		{"github", "gho_", "ghr_"},
		{"auth0", "", "v1."},
		{"okta", "", ""},
	}
	pv := providers[s.intn(len(providers))]
	w.kobj("oauth")
	w.kstr("provider", pv.name)
	s.tmp = append(s.tmp[:0], pv.access...)
	s.tmp = s.appendToken(s.tmp, s.between(60, 110))
	w.kstrb("accessToken", s.tmp)
	s.tmp = append(s.tmp[:0], pv.refresh...)
	s.tmp = s.appendToken(s.tmp, s.between(40, 70))
	w.kstrb("refreshToken", s.tmp)
	w.kint("expiresAt", s.now+int64(s.between(60, 3600)))
	w.kstr("scope", "openid email profile")
	s.tmp = s.appendJWT(s.tmp[:0], userID)
	w.kstrb("idToken", s.tmp)
	w.endObj()
}

// appendJWT appends a compact JWS: base64url of a real header and claims
// (JSON), and a random 64-byte ES256 signature.
func (s *source) appendJWT(dst []byte, userID int) []byte {
	var js []byte
	js = append(js, `{"alg":"ES256","kid":"`...)
	js = s.appendHex(js, 8)
	js = append(js, `","typ":"JWT"}`...)
	dst = base64.RawURLEncoding.AppendEncode(dst, js)
	dst = append(dst, '.')
	iat := s.now - int64(s.intn(600))
	js = append(js[:0], `{"iss":"https://auth.example.com/","sub":"`...)
	js = strconv.AppendInt(js, int64(userID), 10)
	js = append(js, `","aud":"`...)
	js = s.appendBase62(js, 32)
	js = append(js, `","iat":`...)
	js = strconv.AppendInt(js, iat, 10)
	js = append(js, `,"exp":`...)
	js = strconv.AppendInt(js, iat+3600, 10)
	js = append(js, `,"email_verified":true,"nonce":"`...)
	js = s.appendBase62(js, 16)
	js = append(js, `"}`...)
	dst = base64.RawURLEncoding.AppendEncode(dst, js)
	dst = append(dst, '.')
	js = s.appendRandBytes(js[:0], 64)
	return base64.RawURLEncoding.AppendEncode(dst, js)
}
