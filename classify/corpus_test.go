package classify_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/classify"
)

// row is one labelled command of the corpus in testdata/classify.
type row struct {
	Cmd    string         `json:"cmd"`
	Want   classify.Class `json:"want"`
	Why    string         `json:"why"`
	Source string         `json:"source"`
	file   string
	line   int
}

// lenient reports whether a read-only row may come back Unknown: the
// corpus marks commands that are provably read-only but that a more
// conservative design may call unknown.
func (r row) lenient() bool {
	return r.Want == classify.ReadOnly && strings.Contains(r.Why, "designs differ: unknown acceptable")
}

// writeOrUnknown reports whether the row accepts write and unknown alike.
func (r row) writeOrUnknown() bool { return strings.Contains(r.Why, "write/unknown both acceptable") }

func loadCorpus(t testing.TB) []row {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "classify", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	var rows []row
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		for n := 1; dec.More(); n++ {
			var r row
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("%s: row %d: %v", f, n, err)
			}
			r.file, r.line = filepath.Base(f), n
			rows = append(rows, r)
		}
	}
	return rows
}

func TestCorpus(t *testing.T) {
	for _, r := range loadCorpus(t) {
		t.Run(fmt.Sprintf("%s:%d", r.file, r.line), func(t *testing.T) {
			v := classify.Command(r.Cmd)
			got := v.Class
			ok := got == r.Want || (r.lenient() && got == classify.Unknown) ||
				(r.writeOrUnknown() && got != classify.ReadOnly && r.Want != classify.ReadOnly)
			if !ok {
				t.Errorf("Command(%q) = %v, want %v (%s)\nreasons: %v", r.Cmd, got, r.Want, r.Why, v.Reasons)
			}
		})
	}
}

// TestNothingUnsafeIsReadOnly is the security invariant over the corpus:
// no command labelled write or unknown comes back read-only. It also
// logs the confusion matrix.
func TestNothingUnsafeIsReadOnly(t *testing.T) {
	classes := []classify.Class{classify.ReadOnly, classify.Write, classify.Unknown}
	matrix := map[[2]classify.Class]int{}
	rows := loadCorpus(t)
	for _, r := range rows {
		got := classify.Command(r.Cmd).Class
		matrix[[2]classify.Class{r.Want, got}]++
		if got == classify.ReadOnly && r.Want != classify.ReadOnly {
			t.Errorf("%s:%d: %q labelled %v is read-only", r.file, r.line, r.Cmd, r.Want)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "confusion matrix over %d commands (rows: label, columns: verdict)\n", len(rows))
	fmt.Fprintf(&b, "%-10s", "")
	for _, g := range classes {
		fmt.Fprintf(&b, "%10s", g)
	}
	b.WriteString("\n")
	for _, w := range classes {
		fmt.Fprintf(&b, "%-10s", w)
		for _, g := range classes {
			fmt.Fprintf(&b, "%10d", matrix[[2]classify.Class{w, g}])
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}

// TestCorpusCoversBypassClasses checks that every bypass class (1 to 11,
// testdata/classify/README.md) has rows in the corpus, by the "class N"
// tag in their source field.
func TestCorpusCoversBypassClasses(t *testing.T) {
	seen := map[int]int{}
	for _, r := range loadCorpus(t) {
		for n := 1; n <= 11; n++ {
			if strings.Contains(r.Source, fmt.Sprintf("class %d ", n)) || strings.HasSuffix(r.Source, fmt.Sprintf("class %d", n)) ||
				strings.Contains(r.Source, fmt.Sprintf("class %d)", n)) || strings.Contains(r.Source, fmt.Sprintf("class %d,", n)) {
				seen[n]++
			}
		}
	}
	var missing []int
	for n := 1; n <= 11; n++ {
		if seen[n] == 0 {
			missing = append(missing, n)
		}
	}
	sort.Ints(missing)
	if len(missing) > 0 {
		t.Errorf("bypass classes without corpus rows: %v", missing)
	}
}
