package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/classify"
)

func runClassify(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(append([]string{"classify"}, args...), stdio{strings.NewReader(stdin), &out, &errb})
	return code, out.String(), errb.String()
}

// TestClassifyText checks the text form: CLASS, TAB, the command, TAB,
// the reasons of classify.Command.
func TestClassifyText(t *testing.T) {
	for _, cmd := range []string{"git status", "rm -rf build", "python3 x.py", "ls\tx"} {
		code, out, errs := runClassify(t, "", cmd)
		if code != 0 || errs != "" {
			t.Fatalf("classify %q: exit %d, stderr %q", cmd, code, errs)
		}
		v := classify.Command(cmd)
		fields := strings.SplitN(strings.TrimSuffix(out, "\n"), "\t", 3)
		if len(fields) != 3 || fields[0] != v.Class.String() || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
			t.Fatalf("classify %q printed %q, want one line starting with %v", cmd, out, v.Class)
		}
		if want := safe(cmd); fields[1] != want {
			t.Errorf("command field %q, want %q", fields[1], want)
		}
		if !strings.Contains(fields[2], v.Reasons[0].Why) {
			t.Errorf("reasons %q do not contain %q", fields[2], v.Reasons[0].Why)
		}
	}
}

// TestClassifyJSON checks --json: one object per command with exactly
// the fields command, class and reasons.
func TestClassifyJSON(t *testing.T) {
	for _, args := range [][]string{{"--json", "sort -o out in"}, {"-json", "sort -o out in"}, {"--json", "--", "sort -o out in"}} {
		code, out, errs := runClassify(t, "", args...)
		if code != 0 || errs != "" {
			t.Fatalf("classify %q: exit %d, stderr %q", args, code, errs)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		if len(m) != 3 || m["command"] == nil || m["class"] == nil || m["reasons"] == nil {
			t.Errorf("fields %q, want command, class, reasons", out)
		}
		var got classifyLine
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		v := classify.Command("sort -o out in")
		if got.Command != "sort -o out in" || got.Class != classify.Write || got.Class != v.Class || len(got.Reasons) != len(v.Reasons) {
			t.Errorf("got %+v, want command, class write and the reasons of Command", got)
		}
		if r := got.Reasons[0]; "sort -o out in"[r.Pos:r.End] != r.Text {
			t.Errorf("reason %+v does not point at its text", r)
		}
	}
}

// TestClassifyStdin checks that every input line gives one output line,
// in order, including blank lines and CRLF endings.
func TestClassifyStdin(t *testing.T) {
	in := "git diff\r\nrm x\n\nmake test"
	code, out, errs := runClassify(t, in, "--json")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []struct {
		cmd   string
		class classify.Class
	}{{"git diff", classify.ReadOnly}, {"rm x", classify.Write}, {"", classify.Unknown}, {"make test", classify.Unknown}}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines %q, want %d", len(lines), out, len(want))
	}
	for i, l := range lines {
		var got classifyLine
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatal(err)
		}
		if got.Command != want[i].cmd || got.Class != want[i].class {
			t.Errorf("line %d: %+v, want %q %v", i, got, want[i].cmd, want[i].class)
		}
	}
	code, out, _ = runClassify(t, "ls\ncat <<EOF\n")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.HasPrefix(out, "read-only\tls\t") || !strings.Contains(out, "\nunknown\tcat <<EOF\t") {
		t.Errorf("text stdin: exit %d, %q", code, out)
	}
}

func TestClassifyHelp(t *testing.T) {
	for _, h := range []string{"-h", "--help", "-help"} {
		code, out, errs := runClassify(t, "", h)
		if code != 0 || errs != "" || !strings.Contains(out, "acpmux classify [--json] [--] [COMMAND [ARGS...]]") || !strings.Contains(out, "--json") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", h, code, out, errs)
		}
	}
}

func TestClassifyUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--nope", "ls"}, "flag provided but not defined"},
	} {
		code, out, errs := runClassify(t, "", tt.args...)
		if code != 2 || out != "" || !strings.Contains(errs, tt.msg) {
			t.Errorf("classify %q: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, errs, tt.msg)
		}
	}
}

// TestClassifyFlagsEndAtFirstWord: "acpmux classify ls -la" classifies
// ls -la, with or without "--"; several words are one command, each word
// quoted again where the shell needs it.
func TestClassifyFlagsEndAtFirstWord(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // the command column
	}{
		{[]string{"ls", "-la"}, "ls -la"},
		{[]string{"--", "ls", "-la"}, "ls -la"},
		{[]string{"--json", "--", "ls", "-la"}, "ls -la"},
		{[]string{"git", "status", "--json"}, "git status --json"},
		{[]string{"echo", "a b", ">", "x"}, "echo 'a b' '>' x"},
		{[]string{"ls -la | head"}, "ls -la | head"},
	} {
		code, out, errs := runClassify(t, "", tt.args...)
		cmd := out
		if tt.args[0] == "--json" {
			var l classifyLine
			json.Unmarshal([]byte(out), &l)
			cmd = l.Command
		} else if f := strings.Split(out, "\t"); len(f) == 3 {
			cmd = f[1]
		}
		if code != 0 || errs != "" || cmd != tt.want {
			t.Errorf("classify %q: exit %d, stdout %q, stderr %q; want the command %q", tt.args, code, out, errs, tt.want)
		}
	}
	// The redirection word was quoted: echo of a literal ">" is read-only.
	if _, out, _ := runClassify(t, "", "echo", "a", ">", "x"); !strings.HasPrefix(out, "read-only\t") {
		t.Errorf("classify echo a '>' x = %q, want read-only", out)
	}
}

func TestClassifyDashDash(t *testing.T) {
	code, out, _ := runClassify(t, "", "--", "--json")
	if code != 0 || !strings.HasPrefix(out, "unknown\t--json\t") {
		t.Errorf("classify -- --json: exit %d, %q", code, out)
	}
}

func TestClassifyReadError(t *testing.T) {
	var out, errb bytes.Buffer
	code := classifyMain(nil, stdio{errReader{}, &out, &errb})
	if code != 1 || !strings.Contains(errb.String(), "read stdin: broken pipe") {
		t.Errorf("exit %d, stderr %q; want 1 and the read error", code, errb.String())
	}
}
