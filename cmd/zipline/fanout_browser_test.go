package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ziplinekv/zipline"
	"github.com/ziplinekv/zipline/fanout"
	"github.com/ziplinekv/zipline/fanout/wsclient"
	"github.com/ziplinekv/zipline/testbed"
	"github.com/ziplinekv/zipline/testbed/servertest"
)

// chromiumArgs are what headless Chromium needs on this kind of machine:
// no sandbox (root), no GPU, and nothing that reaches for the network.
var chromiumArgs = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"}

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

// devtools is a Chrome DevTools Protocol session on one page, over the
// fanout client.
type devtools struct {
	c  *wsclient.Conn
	id int
}

// call sends a command and returns its result, skipping events.
func (d *devtools) call(t *testing.T, method string, params any, result any) {
	t.Helper()
	if err := d.try(t, method, params, result); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

// try is call, returning the command's error instead of failing.
func (d *devtools) try(t *testing.T, method string, params any, result any) error {
	t.Helper()
	d.id++
	msg, _ := json.Marshal(map[string]any{"id": d.id, "method": method, "params": params})
	if err := d.c.WriteMessage(true, msg); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	for range 10_000 { // events may come first
		d.c.NetConn().SetReadDeadline(time.Now().Add(15 * time.Second))
		_, p, err := d.c.ReadMessage()
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var reply struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(p, &reply) != nil || reply.ID != d.id {
			continue
		}
		if reply.Error != nil {
			return fmt.Errorf("%s", reply.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(reply.Result, result); err != nil {
				t.Fatalf("%s: %v", method, err)
			}
		}
		return nil
	}
	t.Fatalf("%s: no reply", method)
	return nil
}

// waitText evaluates, in the page, a wait of at most 10 s for the
// condition cond (a JavaScript expression, in which text(id) is an
// element's text, empty while it does not exist), and returns the page's visible
// text once it holds, or fails with what the page showed.
func (d *devtools) waitText(t *testing.T, what, cond string) string {
	t.Helper()
	expr := `new Promise((resolve) => {
		const t0 = Date.now();
		const text = id => (document.getElementById(id) || {}).textContent || "";
		(function poll() {
			if (` + cond + `) resolve({ok: true, text: document.body.innerText});
			else if (Date.now() - t0 > 10000) resolve({ok: false, text: document.body.innerText});
			else setTimeout(poll, 50);
		})();
	})`
	var res struct {
		Result struct {
			Value struct {
				OK   bool   `json:"ok"`
				Text string `json:"text"`
			} `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	// The page may still be replacing about:blank, which destroys the
	// context an evaluation runs in: try again, a bounded number of times.
	for i := 0; ; i++ {
		err := d.try(t, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
		if err == nil {
			break
		}
		if i == 20 || !strings.Contains(err.Error(), "context") {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	if res.ExceptionDetails != nil || !res.Result.Value.OK {
		t.Fatalf("waiting for %s: the page shows:\n%s\n(exception: %v)", what, res.Result.Value.Text, res.ExceptionDetails)
	}
	return res.Result.Value.Text
}

// The demo page, opened in headless Chromium, negotiates permessage-deflate
// and shows what is published to Redis, as a person would see it.
func TestFanoutPageInChromium(t *testing.T) {
	bin := chromium(t)
	redis := servertest.NewServer(t, testbed.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv, err := startFanout(ctx, fanoutConfig{redis: zipline.Options{Addr: redis.Addr}, listen: "127.0.0.1:0",
		channel: "browser", hub: fanout.Options{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	// Chromium, in a process group of its own so that every helper process
	// goes with it.
	args := append(chromiumArgs, "--user-data-dir="+t.TempDir(), "--remote-debugging-port=0",
		"--window-size=1000,700", srv.URL()+"/")
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}()
	endpoint := make(chan string, 1)
	go func() {
		defer close(exited)
		re := regexp.MustCompile(`DevTools listening on (ws://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				endpoint <- m[1]
			}
		}
		cmd.Wait()
	}()
	var browserURL string
	select {
	case browserURL = <-endpoint:
	case <-exited:
		t.Fatal("chromium exited before its DevTools endpoint was up")
	case <-time.After(20 * time.Second):
		t.Fatal("chromium did not start its DevTools endpoint within 20 s")
	}

	// The page's own DevTools endpoint.
	host := strings.Split(strings.TrimPrefix(browserURL, "ws://"), "/")[0]
	resp, err := http.Get("http://" + host + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	var targets []struct{ Type, URL, WebSocketDebuggerURL string }
	err = json.NewDecoder(resp.Body).Decode(&targets)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	pageURL := ""
	for _, tg := range targets {
		if tg.Type == "page" && strings.HasPrefix(tg.URL, srv.URL()) {
			pageURL = tg.WebSocketDebuggerURL
		}
	}
	if pageURL == "" {
		t.Fatalf("no page target for %s in %+v", srv.URL(), targets)
	}
	c, err := wsclient.Dial(ctx, pageURL, wsclient.Options{NoCompression: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d := &devtools{c: c}

	text := d.waitText(t, "the WebSocket to open", `text("status") === "open"`)
	if !strings.Contains(text, "permessage-deflate") {
		t.Errorf("the page does not show permessage-deflate as negotiated:\n%s", text)
	}

	// Publish once the hub's Redis subscription is in place.
	for i := 0; ; i++ {
		v, err := redis.Do(ctx, "PUBSUB", "NUMSUB", "browser")
		if err != nil {
			t.Fatal(err)
		}
		if e := v.Elems(); len(e) == 2 && e[1].Int() == 1 {
			break
		}
		if i == 200 {
			t.Fatal("the hub never subscribed to channel browser")
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded above
	}
	var markers []string
	for i := range 3 {
		m := fmt.Sprintf("chromium-check-%d-%d", i, time.Now().UnixNano())
		markers = append(markers, m)
		payload := fmt.Sprintf(`{"marker":%q,"users":[%s{}]}`, m, strings.Repeat(`{"name":"Ada","city":"Paris"},`, 40))
		if _, err := redis.Do(ctx, "PUBLISH", "browser", payload); err != nil {
			t.Fatal(err)
		}
	}
	cond := `text("count") === "3" && text("saved").includes("%")`
	text = d.waitText(t, "the three messages and the saving", cond)
	for _, m := range markers {
		if !strings.Contains(text, m) {
			t.Errorf("the page does not show message %s:\n%s", m, text)
		}
	}
	if !strings.Contains(text, "Bytes saved") || !strings.Contains(text, "permessage-deflate") {
		t.Errorf("the page lacks the negotiated compression or the saving:\n%s", text)
	}

	var shot struct{ Data string }
	d.call(t, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || len(png) < 1000 {
		t.Fatalf("screenshot: %d bytes, %v", len(png), err)
	}
	path := filepath.Join(t.ArtifactDir(), "fanout-page.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes); the page showed:\n%s", path, len(png), text)
	if st := srv.hub.Stats(); st.Deliveries != 3 || st.QueuedBytes >= st.PayloadBytes {
		t.Errorf("hub stats %+v: want 3 compressed deliveries", st)
	}
}
