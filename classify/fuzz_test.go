package classify_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/acpmux/acpmux/classify"
)

// FuzzCommand checks that Command never panics, that input which does
// not parse is never read-only, that reasons point into the input, that
// a read-only verdict never hides a divergence from bash, that the
// verdict is the same for the input printed back by syntax.Printer
// (unless bash may read the input differently, when the printed form is
// the parser's reading and not bash's), and, where bash is installed,
// that a program judged read-only never changes the fuzz directory when
// bash runs it. Seeds: the corpus and testdata/fuzz/FuzzCommand.
func FuzzCommand(f *testing.F) {
	for _, r := range loadCorpus(f) {
		f.Add(r.Cmd)
	}
	bash, _ := exec.LookPath("bash")
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	printer := syntax.NewPrinter()
	f.Fuzz(func(t *testing.T, src string) {
		v := classify.Command(src)
		if v.Diverges && v.Class == classify.ReadOnly {
			t.Fatalf("Command(%q) = read-only, but bash may read it differently: %v", src, v.Reasons)
		}
		if v.Class == classify.ReadOnly && bash != "" {
			if ch := runInBash(t, bash, src, false); len(ch) > 0 {
				t.Fatalf("Command(%q) = read-only, but bash changed %v", src, ch)
			}
		}
		for _, r := range v.Reasons {
			if strings.HasPrefix(r.Why, "classifier error") {
				t.Fatalf("Command(%q) panicked: %s", src, r.Why)
			}
			if r.Pos < 0 || r.End < r.Pos || r.End > len(src) || src[r.Pos:r.End] != r.Text {
				t.Fatalf("Command(%q): reason %+v does not point into the input", src, r)
			}
			if r.Class != v.Class {
				t.Fatalf("Command(%q): reason %+v has class %v, verdict %v", src, r, r.Class, v.Class)
			}
		}
		file, err := parser.Parse(strings.NewReader(src), "")
		if err != nil {
			if v.Class == classify.ReadOnly {
				t.Fatalf("Command(%q) = read-only, but it does not parse: %v", src, err)
			}
			return
		}
		if v.Diverges || len(src) > classify.MaxInputBytes || strings.ContainsFunc(src, isControl) {
			return // decided before parsing; printing may drop the bytes
		}
		var buf bytes.Buffer
		if err := printer.Print(&buf, file); err != nil {
			t.Fatalf("print %q: %v", src, err)
		}
		printed := buf.String()
		if _, err := parser.Parse(strings.NewReader(printed), ""); err != nil {
			// A printer quirk, not a classifier property; the original
			// verdict still must not be weaker than unknown for it.
			t.Skipf("printed form of %q does not parse: %v", src, err)
		}
		if w := classify.Command(printed); w.Class != v.Class {
			t.Fatalf("Command(%q) = %v, but the printed form %q is %v\nreasons: %v\nprinted reasons: %v",
				src, v.Class, printed, w.Class, v.Reasons, w.Reasons)
		}
	})
}

func isControl(r rune) bool { return (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f }
