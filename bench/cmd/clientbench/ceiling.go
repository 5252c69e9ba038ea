package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ceilingResult is one redis-benchmark -P 16 run for one value size.
type ceilingResult struct {
	size int
	rps  map[string]float64 // "get"/"set" → requests per second
	err  string
}

var ceilingLine = regexp.MustCompile(`^(SET|GET): ([0-9.]+) requests per second`)

// runCeiling runs `redis-benchmark -t get,set -P 16 -q -n n -d size` against
// host:port: the server's pipelined throughput, the ceiling for any client.
func runCeiling(host, port string, n, size int) ceilingResult {
	res := ceilingResult{size: size, rps: map[string]float64{}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := ceilingArgs(host, port, n, size)
	out, err := exec.CommandContext(ctx, "redis-benchmark", args...).CombinedOutput()
	if err != nil {
		res.err = fmt.Sprintf("redis-benchmark: %v: %s", err, strings.TrimSpace(lastLine(string(out))))
		return res
	}
	for _, line := range strings.FieldsFunc(string(out), func(r rune) bool { return r == '\r' || r == '\n' }) {
		if m := ceilingLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			res.rps[strings.ToLower(m[1])] = v
		}
	}
	if len(res.rps) == 0 {
		res.err = "could not parse redis-benchmark output: " + lastLine(string(out))
	}
	return res
}

func ceilingArgs(host, port string, n, size int) []string {
	return []string{"-h", host, "-p", port, "-t", "get,set", "-P", "16", "-q",
		"-n", strconv.Itoa(n), "-d", strconv.Itoa(size)}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}
