package classify

import "testing"

func TestSedScript(t *testing.T) {
	tests := []struct {
		script string
		want   Class
	}{
		{"p", ReadOnly},
		{"10,20p", ReadOnly},
		{"/^#/d", ReadOnly},
		{"s/a/b/g;s|x|y|2", ReadOnly},
		{"1!G;h;$!d", ReadOnly},
		{":a;N;$!ba;s/\\n/ /g", ReadOnly},
		{"/start/,/end/{s/a/b/;p}", ReadOnly},
		{"0~3p", ReadOnly},
		{"$a\\\nend", ReadOnly},
		{"1i header; w not-a-command", ReadOnly},
		{"y/abc/xyz/", ReadOnly},
		{"\\%x%p", ReadOnly},
		{"/[/]/p", Unknown}, // a sed that ends the regex at the bracketed / reads command "]"
		{"w out", Write},
		{"/x/W out", Write},
		{"s/a/b/w out", Write},
		{"s/a/b/gw out", Write},
		{"1!{s/a/b/;w out\n}", Write},
		{"/[/]/w out", Write},
		{"s/[/]/x/;w out", Write},
		{"e", Unknown},
		{"2e id", Unknown},
		{"s/x/id/e", Unknown},
		{"r /etc/passwd", Unknown},
		{"R f", Unknown},
		{"s/a/b/x", Unknown},
		{"k", Unknown},
		{"s/a/b", Unknown},
		{"/unterminated", Unknown},
		{"p x", Unknown},
		{"s/a/b/;w out;e", Write},
	}
	for _, tt := range tests {
		if got, why := sedScript(tt.script); got != tt.want {
			t.Errorf("sedScript(%q) = %v (%s), want %v", tt.script, got, why, tt.want)
		}
	}
}

// TestSedBracketReadings checks that a script read differently by seds
// that do and do not treat a delimiter in brackets as literal takes the
// strongest reading.
func TestSedBracketReadings(t *testing.T) {
	script := "/[/]w x/p" // GNU 4.9: regex "[/]w x", command p; others: regex "[", command "]"
	for _, mode := range []bracketMode{bracketNone, bracketLiteral, bracketEscape} {
		p := sedParser{s: script, brackets: mode}
		c, _ := p.script()
		if mode == bracketNone && c == ReadOnly {
			t.Errorf("reading without brackets = read-only, want unknown")
		}
	}
	if c, _ := sedScript(script); c == ReadOnly {
		t.Errorf("sedScript(%q) = read-only", script)
	}
}

func TestAwkProgram(t *testing.T) {
	tests := []struct {
		prog string
		want Class
	}{
		{"{print $1}", ReadOnly},
		{"$3 > 100 {print}", ReadOnly},
		{"{ if ($1 > $2) print $1; else print $2 }", ReadOnly},
		{"{ print (a > b) }", ReadOnly},
		{"BEGIN { x = 4 / 2; y = x++ / 2 }", ReadOnly},
		{"/a|b/ { n++ } END { print n }", ReadOnly},
		{`{ print > "/dev/stderr" }`, ReadOnly},
		{"a || b { print }", ReadOnly},
		{`{ print > "out.txt" }`, Write},
		{`{ printf("%s\n", $0) >> "log" }`, Write},
		{`{ print $1 > $2 }`, Unknown},
		{`{ print | "sort" }`, Unknown},
		{`BEGIN { "date" | getline d }`, Unknown},
		{`BEGIN { while ((getline line < "f") > 0) n++ }`, Unknown},
		{`BEGIN { system("id") }`, Unknown},
		{`BEGIN { x++ / 2; system("id"); y = 1 / 1 }`, Unknown},
		{`@include "x.awk"`, Unknown},
		{`{ print |& "cat" }`, Unknown},
		{`BEGIN { close("x") }`, Unknown},
		{`/system/ { print }`, Unknown},
		{`{ print "unterminated }`, Unknown},
	}
	for _, tt := range tests {
		if got, why := awkProgram(tt.prog); got != tt.want {
			t.Errorf("awkProgram(%q) = %v (%s), want %v", tt.prog, got, why, tt.want)
		}
	}
}
