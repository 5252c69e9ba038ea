package netshape

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Profile is a network to imitate: a rate limit and a delay.
type Profile struct {
	Name string
	// Rate is the bandwidth in bits per second; 0 leaves the path as fast
	// as loopback is.
	Rate int64
	// Delay is added to every packet by netem, where the kernel has it, so
	// a round trip takes about twice as long (both directions cross the
	// same loopback). 0 adds none.
	Delay time.Duration
}

// Shaped reports whether p limits the rate.
func (p Profile) Shaped() bool { return p.Rate > 0 }

// The profiles of the DoorDash benchmark. The shaped ones add 100 µs each
// way, a data-centre round trip, where netem exists.
var (
	Gbit1    = Profile{Name: "1gbit", Rate: 1e9, Delay: 100 * time.Microsecond}
	Gbit10   = Profile{Name: "10gbit", Rate: 10e9, Delay: 100 * time.Microsecond}
	Unshaped = Profile{Name: "unshaped"}
)

// Profiles returns the standard profiles, slowest first.
func Profiles() []Profile { return []Profile{Gbit1, Gbit10, Unshaped} }

// ParseProfile reads a profile name: "unshaped", or a rate such as "1gbit",
// "10gbit" or "500mbit", with an optional "+<delay>" such as
// "1gbit+200us" (a rate without one gets the standard 100 µs).
func ParseProfile(s string) (Profile, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == Unshaped.Name {
		return Unshaped, nil
	}
	rate, delay, hasDelay := strings.Cut(s, "+")
	p := Profile{Name: s, Delay: Gbit1.Delay}
	if hasDelay {
		d, err := time.ParseDuration(delay)
		if err != nil || d < 0 {
			return Profile{}, fmt.Errorf("netshape: profile %q: bad delay %q", s, delay)
		}
		p.Delay = d
	}
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}} {
		if n, ok := strings.CutSuffix(rate, u.suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v <= 0 || v > 1000 {
				break
			}
			p.Rate = int64(v * float64(u.mult))
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("netshape: profile %q: want unshaped or a rate such as 1gbit, 10gbit, 500mbit", s)
}

// ParseProfiles reads a comma-separated list of profiles.
func ParseProfiles(s string) ([]Profile, error) {
	var out []Profile
	for _, f := range strings.Split(s, ",") {
		p, err := ParseProfile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// FormatRate writes a rate in bits per second as "1.00 Gbit/s" or
// "940 Mbit/s".
func FormatRate(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.2f Gbit/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.0f Mbit/s", bps/1e6)
	}
	return fmt.Sprintf("%.0f kbit/s", bps/1e3)
}
