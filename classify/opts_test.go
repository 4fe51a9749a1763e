package classify

import (
	"strings"
	"testing"
)

func staticArgs(words ...string) []arg {
	args := make([]arg, len(words))
	for i, w := range words {
		args[i] = arg{text: w, static: true}
	}
	return args
}

// scanAll runs getopt over words and describes each item.
func scanAll(t *optTable, stop bool, words ...string) []string {
	g := getopt{t: t, args: staticArgs(words...), stop: stop}
	var out []string
	for {
		it, ok := g.next()
		if !ok {
			return out
		}
		switch {
		case it.bad != "":
			out = append(out, "bad")
		case it.opt == nil:
			out = append(out, "op:"+it.val.text)
		case it.hasVal:
			out = append(out, it.opt.name+"="+it.val.text+"/"+it.opt.class.String())
		default:
			out = append(out, it.opt.name+"/"+it.opt.class.String())
		}
	}
}

func TestGetopt(t *testing.T) {
	tab := parseOpts(`-a -b -k: -i:: -NUM --all --key: --in-place::!w --output:!w --out-mode: --compress-program:!u --color::`)
	tests := []struct {
		words []string
		stop  bool
		want  string
	}{
		{[]string{"-ab", "f"}, false, "-a/read-only -b/read-only op:f"},
		{[]string{"-kVALUE", "-k", "v2"}, false, "-k=VALUE/read-only -k=v2/read-only"},
		{[]string{"-ak2", "f"}, false, "-a/read-only -k=2/read-only op:f"},
		{[]string{"-i.bak", "-i"}, false, "-i=.bak/read-only -i/read-only"},
		{[]string{"-20", "f"}, false, "-NUM/read-only op:f"},
		{[]string{"f", "--all"}, false, "op:f --all/read-only"},
		{[]string{"f", "--all"}, true, "op:f op:--all"},
		{[]string{"--", "-a"}, false, "op:-a"},
		{[]string{"-", "-a"}, false, "op:- -a/read-only"},
		{[]string{"--key=x", "--key", "y"}, false, "--key=x/read-only --key=y/read-only"},
		{[]string{"--ke", "v"}, false, "--key=v/read-only"},
		{[]string{"--in", "f"}, false, "--in-place/write op:f"},
		{[]string{"--in=.bak"}, false, "--in-place=.bak/write"},
		{[]string{"--outp=f"}, false, "--output=f/write"},
		{[]string{"--ou=f"}, false, "--output=f/write"}, // ambiguous with --out-mode: the stronger wins
		{[]string{"--co=gz"}, false, "bad"},             // --color:: and --compress-program: differ in mode
		{[]string{"--compress-p=gz"}, false, "--compress-program=gz/unknown"},
		{[]string{"--nope"}, false, "bad"},
		{[]string{"-z"}, false, "bad"},
		{[]string{"--all=x"}, false, "bad"},
		{[]string{"-k"}, false, "bad"},
	}
	for _, tt := range tests {
		got := strings.Join(scanAll(tab, tt.stop, tt.words...), " ")
		if got != tt.want {
			t.Errorf("getopt %q (stop %v) = %q, want %q", tt.words, tt.stop, got, tt.want)
		}
	}
}

func TestGetoptDynamicWords(t *testing.T) {
	tab := parseOpts(`-a -k: --key: --all`)
	dyn := func(prefix string, free bool) arg { return arg{text: prefix, free: free} }
	tests := []struct {
		name string
		args []arg
		want string
	}{
		{"quoted variable may be an option", []arg{dyn("", false)}, "bad"},
		{"path prefix is an operand", []arg{dyn("src/", false)}, "op:src/"},
		{"split expansion may add options", []arg{dyn("src/", true)}, "bad"},
		{"value of -k", []arg{{text: "-k", static: true}, dyn("", false)}, "-k=/read-only"},
		{"--key=$v fixes the option", []arg{dyn("--key=", false)}, "--key=/read-only"},
		{"-k$v fixes the option", []arg{dyn("-k", false)}, "-k=/read-only"},
		{"-a$v continues the cluster", []arg{dyn("-a", false)}, "bad"},
		{"after --", []arg{{text: "--", static: true}, dyn("", true)}, "op:"},
	}
	for _, tt := range tests {
		g := getopt{t: tab, args: tt.args}
		var got []string
		for {
			it, ok := g.next()
			if !ok {
				break
			}
			switch {
			case it.bad != "":
				got = append(got, "bad")
			case it.opt == nil:
				got = append(got, "op:"+it.val.text)
			default:
				got = append(got, it.opt.name+"="+it.val.text+"/"+it.opt.class.String())
			}
		}
		if s := strings.Join(got, " "); s != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, s, tt.want)
		}
	}
}

func TestParseOptsPanicsOnBadSpec(t *testing.T) {
	for _, spec := range []string{"-o!x", "o", "-ab", "-a -a"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("parseOpts(%q) did not panic", spec)
				}
			}()
			parseOpts(spec)
		}()
	}
}
