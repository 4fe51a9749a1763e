package classify_test

import (
	"fmt"

	"github.com/acpmux/acpmux/classify"
)

func ExampleCommand() {
	for _, src := range []string{
		"git log --oneline -5 | head -3",
		"sort --out=sorted.txt names.txt",
		"python3 script.py",
	} {
		v := classify.Command(src)
		r := v.Reasons[0]
		fmt.Printf("%-9s %-32s %q at %d-%d: %s\n", v.Class, src, r.Text, r.Pos, r.End, r.Why)
	}
	// Output:
	// read-only git log --oneline -5 | head -3   "git log --oneline -5" at 0-20: git log only reads the repository
	// write     sort --out=sorted.txt names.txt  "--out=sorted.txt" at 5-21: sort --output writes its output to a file
	// unknown   python3 script.py                "python3" at 0-7: python3 runs code
}
