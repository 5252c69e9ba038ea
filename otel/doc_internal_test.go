package ziplineotel

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/ziplinekv/zipline"
)

// The package documentation's table of instruments is the list users read:
// it names every instrument RegisterMetrics registers, and nothing else.
func TestDocListsEveryInstrument(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^//\t((?:zipline|db)\.[a-z_.]+) `).FindAllSubmatch(doc, -1) {
		documented = append(documented, string(m[1]))
	}
	var registered []string
	for _, m := range statMetrics(zipline.Options{}, nil) {
		registered = append(registered, m.name)
	}
	slices.Sort(documented)
	slices.Sort(registered)
	if !slices.Equal(documented, registered) {
		t.Fatalf("doc.go lists %v\nRegisterMetrics registers %v", documented, registered)
	}
}
