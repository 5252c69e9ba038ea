package analyze

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/testbed"
)

// chromium returns the browser's path (testbed.Chromium installs it when
// it can), or skips the test saying why.
func chromium(t *testing.T) string {
	t.Helper()
	p, err := testbed.Chromium(t.Context())
	if err != nil {
		t.Skip("skipping: " + err.Error())
	}
	return p
}

// screenshot renders page in headless Chromium and returns the image.
func screenshot(t *testing.T, page string, w, h int) image.Image {
	t.Helper()
	bin := chromium(t)
	shot := filepath.Join(t.TempDir(), "shot.png")
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--window-size="+strconv.Itoa(w)+","+strconv.Itoa(h), "--screenshot="+shot, "file://"+page)
	// Its own process group, so that its helpers go with it on a timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if art := t.ArtifactDir(); art != "" {
		data, _ := os.ReadFile(shot)
		os.WriteFile(filepath.Join(art, "analyze-report.png"), data, 0o644)
	}
	return img
}

// colorCount counts the pixels of img within 12 of each channel of hex.
func colorCount(img image.Image, hex string) int {
	var want [3]int
	for i := range 3 {
		v := 0
		for _, c := range hex[1+2*i : 3+2*i] {
			v = v*16 + strings.IndexRune("0123456789abcdef", c)
		}
		want[i] = v
	}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if abs(int(r>>8)-want[0]) <= 12 && abs(int(g>>8)-want[1]) <= 12 && abs(int(bl>>8)-want[2]) <= 12 {
				n++
			}
		}
	}
	return n
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// The HTML report is one self-contained page, and in a browser its charts
// are there: headless Chromium's screenshot shows the bars of both charts
// (now, after, and every layout's saving), not a blank page.
func TestHTMLReportRendersInChromium(t *testing.T) {
	srv, _ := filled(t, testbed.Redis, 5000)
	r, err := Run(t.Context(), Config{Options: zipline.Options{Addr: srv.Addr}, Rate: -1})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	// Self-contained: no script, nothing fetched.
	if strings.Contains(html, "<script") || regexp.MustCompile(`(src|href)=`).MatchString(html) ||
		strings.Count(html, "http") != strings.Count(html, "http://www.w3.org/2000/svg") {
		t.Errorf("the page is not self-contained")
	}
	for _, s := range []string{"Memory by pattern", "What each layout would save", "zipline migrate -addr",
		"views:&lt;int&gt;", "recommended", "codec=dict"} {
		if !strings.Contains(html, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	img := screenshot(t, path, 1200, 1600)
	b := img.Bounds()
	nonWhite := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r>>8 < 240 || g>>8 < 240 || bl>>8 < 240 {
				nonWhite++
			}
		}
	}
	now, after, option := colorCount(img, colorNow), colorCount(img, colorAfter), colorCount(img, colorOption)
	t.Logf("%dx%d screenshot: %d non-white pixels; bars: %d now, %d after, %d other layouts", b.Dx(), b.Dy(),
		nonWhite, now, after, option)
	if nonWhite < b.Dx()*b.Dy()/20 {
		t.Errorf("the page looks blank: %d non-white pixels of %d", nonWhite, b.Dx()*b.Dy())
	}
	for name, n := range map[string]int{"now": now, "after": after, "other layouts": option} {
		if n < 3000 {
			t.Errorf("%d pixels of the %q bars: the chart did not render", n, name)
		}
	}
}
