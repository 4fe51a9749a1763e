package classify_test

import (
	"encoding/json"
	"testing"

	"github.com/acpmux/acpmux/classify"
)

func TestClassStringsAndJSON(t *testing.T) {
	for _, tt := range []struct {
		c    classify.Class
		want string
	}{{classify.ReadOnly, "read-only"}, {classify.Write, "write"}, {classify.Unknown, "unknown"}} {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		b, err := json.Marshal(tt.c)
		if err != nil || string(b) != `"`+tt.want+`"` {
			t.Errorf("json.Marshal(%v) = %s, %v; want %q", tt.c, b, err, tt.want)
		}
		var back classify.Class
		if err := json.Unmarshal(b, &back); err != nil || back != tt.c {
			t.Errorf("json.Unmarshal(%s) = %v, %v; want %v", b, back, err, tt.c)
		}
	}
	var c classify.Class
	if err := json.Unmarshal([]byte(`"safe"`), &c); err == nil {
		t.Error(`json.Unmarshal("safe") succeeded, want an error`)
	}
	if _, err := json.Marshal(classify.Class(7)); err == nil {
		t.Error("json.Marshal(Class(7)) succeeded, want an error")
	}
}

// TestClassZeroAndMax checks that the zero Class is Unknown and that Max
// orders write > unknown > read-only, whatever the argument order.
func TestClassZeroAndMax(t *testing.T) {
	var zero classify.Class
	if zero != classify.Unknown {
		t.Errorf("zero Class = %v, want unknown", zero)
	}
	all := []classify.Class{classify.ReadOnly, classify.Unknown, classify.Write}
	for i, a := range all {
		for j, b := range all {
			want := all[max(i, j)]
			if got := a.Max(b); got != want {
				t.Errorf("%v.Max(%v) = %v, want %v", a, b, got, want)
			}
		}
	}
}

func TestVerdictJSON(t *testing.T) {
	v := classify.Command("ls > out.txt")
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["class"] != "write" {
		t.Errorf("class = %v, want write", m["class"])
	}
	rs, _ := m["reasons"].([]any)
	if len(rs) != 1 {
		t.Fatalf("reasons = %v, want one", m["reasons"])
	}
	r := rs[0].(map[string]any)
	if r["text"] != "> out.txt" || r["pos"] != 3.0 || r["end"] != 12.0 || r["class"] != "write" {
		t.Errorf("reason = %v, want the redirection at 3-12", r)
	}
}

// TestReasonsPointAtDecidingWords checks positions for nested scripts:
// a plain single-quoted script maps exactly, others point at the word.
func TestReasonsPointAtDecidingWords(t *testing.T) {
	for _, tt := range []struct{ src, text string }{
		{"bash -c 'ls; rm -rf x'", "rm"},
		{`bash -c "ls; rm -rf \"x\""`, `"ls; rm -rf \"x\""`},
		{"echo a && sort -o out in", "-o"},
		{"git -c alias.x='!touch y' x", "alias.x='!touch y'"},
		{"r\\\nm x", "r\\\nm"},
	} {
		v := classify.Command(tt.src)
		if v.Class != classify.Write || len(v.Reasons) == 0 || v.Reasons[0].Text != tt.text {
			t.Errorf("Command(%q) = %v %v, want write at %q", tt.src, v.Class, v.Reasons, tt.text)
		}
	}
}

func TestParseErrorKept(t *testing.T) {
	v := classify.Command("echo 'unterminated")
	if v.Class != classify.Unknown || v.Err == nil {
		t.Fatalf("Command = %v, err %v; want unknown with a parse error", v.Class, v.Err)
	}
	if v := classify.Command("ls"); v.Err != nil {
		t.Errorf("Command(ls).Err = %v", v.Err)
	}
}

func TestPrograms(t *testing.T) {
	v := classify.Command("timeout 5 xargs sh -c 'grep x | sort' _ && $CMD")
	want := []string{"timeout", "xargs", "sh", "grep", "sort"}
	if len(v.Programs) != len(want) {
		t.Fatalf("Programs = %q, want %q", v.Programs, want)
	}
	for i := range want {
		if v.Programs[i] != want[i] {
			t.Fatalf("Programs = %q, want %q", v.Programs, want)
		}
	}
}

// TestConcurrent classifies the corpus from several goroutines; run with
// -race.
func TestConcurrent(t *testing.T) {
	rows := loadCorpus(t)
	want := make([]classify.Class, len(rows))
	for i, r := range rows {
		want[i] = classify.Command(r.Cmd).Class
	}
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			ok := true
			for i, r := range rows {
				if classify.Command(r.Cmd).Class != want[i] {
					ok = false
				}
			}
			done <- ok
		}()
	}
	for g := 0; g < 4; g++ {
		if !<-done {
			t.Error("concurrent Command calls disagreed")
		}
	}
}
