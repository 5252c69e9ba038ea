package wsproto

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// keyGUID is RFC 6455's constant for Sec-WebSocket-Accept.
const keyGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// AcceptKey is the Sec-WebSocket-Accept value for a Sec-WebSocket-Key.
func AcceptKey(key string) string {
	h := sha1.New()
	h.Write([]byte(key))
	h.Write([]byte(keyGUID))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// ValidKey reports whether key is a Sec-WebSocket-Key: base64 of 16 bytes.
func ValidKey(key string) bool {
	b, err := base64.StdEncoding.DecodeString(key)
	return err == nil && len(b) == 16
}

// Extension is one element of a Sec-WebSocket-Extensions header.
type Extension struct {
	Name   string
	Params []Param
}

// Param is an extension parameter; Value is empty for a bare parameter.
type Param struct {
	Name, Value string
	HasValue    bool
}

// ParseExtensions parses Sec-WebSocket-Extensions header values (RFC 6455
// section 9.1): a comma-separated list of extension names, each with
// semicolon-separated parameters whose values are tokens or quoted strings.
func ParseExtensions(values []string) ([]Extension, error) {
	var out []Extension
	for _, v := range values {
		p := extParser{s: v}
		for {
			p.space()
			if p.done() {
				break
			}
			if p.peek() == ',' { // empty list element
				p.i++
				continue
			}
			e, err := p.extension()
			if err != nil {
				return nil, err
			}
			out = append(out, e)
			p.space()
			if p.done() {
				break
			}
			if p.peek() != ',' {
				return nil, fmt.Errorf("websocket: extensions: unexpected %q at %d", p.peek(), p.i)
			}
			p.i++
		}
	}
	return out, nil
}

type extParser struct {
	s string
	i int
}

func (p *extParser) done() bool { return p.i >= len(p.s) }
func (p *extParser) peek() byte { return p.s[p.i] }

func (p *extParser) space() {
	for !p.done() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

func (p *extParser) token() (string, error) {
	start := p.i
	for !p.done() && isTokenChar(p.peek()) {
		p.i++
	}
	if p.i == start {
		if p.done() {
			return "", fmt.Errorf("websocket: extensions: token expected at end")
		}
		return "", fmt.Errorf("websocket: extensions: token expected at %d, found %q", p.i, p.peek())
	}
	return p.s[start:p.i], nil
}

func (p *extParser) extension() (Extension, error) {
	name, err := p.token()
	if err != nil {
		return Extension{}, err
	}
	e := Extension{Name: name}
	for {
		p.space()
		if p.done() || p.peek() != ';' {
			return e, nil
		}
		p.i++
		p.space()
		var prm Param
		if prm.Name, err = p.token(); err != nil {
			return e, err
		}
		p.space()
		if !p.done() && p.peek() == '=' {
			p.i++
			p.space()
			prm.HasValue = true
			if !p.done() && p.peek() == '"' {
				prm.Value, err = p.quoted()
			} else {
				prm.Value, err = p.token()
			}
			if err != nil {
				return e, err
			}
		}
		e.Params = append(e.Params, prm)
	}
}

func (p *extParser) quoted() (string, error) {
	p.i++ // opening quote
	var b strings.Builder
	for !p.done() {
		c := p.peek()
		p.i++
		switch {
		case c == '"':
			return b.String(), nil
		case c == '\\':
			if p.done() {
				return "", fmt.Errorf("websocket: extensions: unterminated quoted string")
			}
			b.WriteByte(p.peek())
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", fmt.Errorf("websocket: extensions: unterminated quoted string")
}

func isTokenChar(c byte) bool {
	if c <= ' ' || c >= 0x7f {
		return false
	}
	return !strings.ContainsRune(`()<>@,;:\"/[]?={}`, rune(c))
}

// DeflateName is the permessage-deflate extension token.
const DeflateName = "permessage-deflate"

// Deflate is a permessage-deflate offer or response (RFC 7692 section 7.1).
// Window bits are 0 when absent; ClientMaxWindowBits is -1 for the bare
// parameter a client sends to say it accepts any value.
type Deflate struct {
	ServerNoContextTakeover bool
	ClientNoContextTakeover bool
	ServerMaxWindowBits     int
	ClientMaxWindowBits     int
}

// ParseDeflate reads the parameters of a permessage-deflate element. A
// repeated or unknown parameter, or a window size that is not 8..15 in
// plain decimal ("+15" and "015" are not), makes the element invalid (RFC
// 7692 section 7.1), and a server must decline it.
func ParseDeflate(e Extension) (Deflate, error) {
	var d Deflate
	seen := map[string]bool{}
	for _, p := range e.Params {
		if seen[p.Name] {
			return d, fmt.Errorf("websocket: permessage-deflate: %s repeated", p.Name)
		}
		seen[p.Name] = true
		switch p.Name {
		case "server_no_context_takeover", "client_no_context_takeover":
			if p.HasValue {
				return d, fmt.Errorf("websocket: permessage-deflate: %s takes no value", p.Name)
			}
			if p.Name[0] == 's' {
				d.ServerNoContextTakeover = true
			} else {
				d.ClientNoContextTakeover = true
			}
		case "server_max_window_bits", "client_max_window_bits":
			bits := -1
			if p.HasValue {
				n, ok := windowBits(p.Value)
				if !ok {
					return d, fmt.Errorf("websocket: permessage-deflate: %s=%q is not 8..15", p.Name, p.Value)
				}
				bits = n
			} else if p.Name[0] == 's' {
				return d, fmt.Errorf("websocket: permessage-deflate: server_max_window_bits needs a value")
			}
			if p.Name[0] == 's' {
				d.ServerMaxWindowBits = bits
			} else {
				d.ClientMaxWindowBits = bits
			}
		default:
			return d, fmt.Errorf("websocket: permessage-deflate: unknown parameter %q", p.Name)
		}
	}
	return d, nil
}

// windowBits reads a window-bits value as RFC 7692 section 7.1 writes it:
// the decimal digits of a number from 8 to 15, with no sign and no leading
// zero (strconv.Atoi would also take "+15" or "015").
func windowBits(s string) (int, bool) {
	switch {
	case len(s) == 1 && s[0] >= '8' && s[0] <= '9':
		return int(s[0] - '0'), true
	case len(s) == 2 && s[0] == '1' && s[1] >= '0' && s[1] <= '5':
		return 10 + int(s[1]-'0'), true
	}
	return 0, false
}

// String formats d as a Sec-WebSocket-Extensions element.
func (d Deflate) String() string {
	s := DeflateName
	if d.ServerNoContextTakeover {
		s += "; server_no_context_takeover"
	}
	if d.ClientNoContextTakeover {
		s += "; client_no_context_takeover"
	}
	if d.ServerMaxWindowBits > 0 {
		s += "; server_max_window_bits=" + strconv.Itoa(d.ServerMaxWindowBits)
	}
	switch {
	case d.ClientMaxWindowBits > 0:
		s += "; client_max_window_bits=" + strconv.Itoa(d.ClientMaxWindowBits)
	case d.ClientMaxWindowBits < 0:
		s += "; client_max_window_bits"
	}
	return s
}

// HeaderHasToken reports whether a comma-separated header (Connection,
// Upgrade) lists token, case-insensitively.
func HeaderHasToken(values []string, token string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}
