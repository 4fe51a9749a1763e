package classify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpmux/acpmux/classify"
	"github.com/acpmux/acpmux/internal/leakcheck"
	"github.com/acpmux/acpmux/internal/optional"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// The differential oracle: every program Command calls read-only is run
// by real bash in a throwaway directory, and must leave it unchanged.
//
//	go test ./classify -run TestBashOracle                      # 20,000 programs, fixed seed
//	ACPMUX_ORACLE_N=1000000 go test ./classify -run TestBashOracle -timeout 0
//	ACPMUX_ORACLE_SEED=7 ...                                     # another seed
//	ACPMUX_ORACLE_RECORD=1 ...                                   # append finds to testdata/classify/oracle.jsonl
//
// A counterexample is a program that the classifier calls read-only and
// that creates, changes or removes a file under bash. Every one found is
// kept in testdata/classify/oracle.jsonl, which the corpus tests load
// (the row must not be read-only) and TestOracleCounterexamples runs
// again under bash.

// oracleDefaultN is the number of programs of the run in go test ./...
const oracleDefaultN = 20000

// bashPath returns the bash to run, or skips the test. ACPMUX_REQUIRE_BASH
// (set by .ci/run) turns the skip into a failure.
func bashPath(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("bash")
	if err != nil {
		if os.Getenv("ACPMUX_REQUIRE_BASH") != "" {
			t.Fatalf("bash is required (ACPMUX_REQUIRE_BASH is set) but not found: %v", err)
		}
		optional.Skip(t, "bash", "bash not found: the differential oracle against real bash is skipped (install bash to run it)")
	}
	return p
}

// sandbox is a fresh directory for one program: the working directory,
// HOME and TMPDIR are all inside it.
type sandbox struct{ dir string }

func newSandbox(t testing.TB) sandbox {
	dir, err := os.MkdirTemp("", "acpmux-oracle-")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"a.txt":          "alpha\nbeta\n",
		"b.go":           "package b\n",
		"sub/c.txt":      "gamma\n",
		"home/.profile":  "",
		"tmp/.keep":      "",
		"EOF":            "a file named EOF\n",
		"sub/deep/d.txt": "delta\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return sandbox{dir}
}

// snapshot lists every file and directory under the sandbox with its
// type, size, mode and modification time.
func (s sandbox) snapshot() map[string]string {
	m := map[string]string{}
	filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			m[p] = "error: " + err.Error()
			return nil
		}
		info, err := d.Info()
		if err != nil {
			m[p] = "error: " + err.Error()
			return nil
		}
		m[p] = fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return m
}

// changes returns the paths that differ between two snapshots.
func changes(before, after map[string]string) []string {
	var out []string
	for p, v := range after {
		if w, ok := before[p]; !ok {
			out = append(out, "created "+p)
		} else if v != w {
			out = append(out, "changed "+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, "removed "+p)
		}
	}
	return out
}

// runInBash runs prog in bash --noprofile --norc in a fresh sandbox,
// with a minimal environment and a time limit, as `bash -c` when stdin
// is false and as a script on standard input when it is true. It
// returns what changed under the sandbox.
func runInBash(t testing.TB, bash, prog string, stdin bool) []string {
	s := newSandbox(t)
	defer os.RemoveAll(s.dir)
	before := s.snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	if stdin {
		cmd = exec.CommandContext(ctx, bash, "--noprofile", "--norc", "-s")
		cmd.Stdin = strings.NewReader(prog)
	} else {
		cmd = exec.CommandContext(ctx, bash, "--noprofile", "--norc", "-c", prog)
	}
	cmd.Dir = s.dir
	cmd.Env = []string{
		"HOME=" + filepath.Join(s.dir, "home"),
		"TMPDIR=" + filepath.Join(s.dir, "tmp"),
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LC_ALL=C.UTF-8",
	}
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // the exit status does not matter; the files do
	// Give a background job that outlived bash a moment to act.
	if strings.Contains(prog, "&") {
		time.Sleep(20 * time.Millisecond)
	}
	ch := changes(before, s.snapshot())
	for i := range ch {
		ch[i] = strings.Replace(ch[i], s.dir, ".", 1)
	}
	sort.Strings(ch)
	return ch
}

// gen builds shell programs from a small grammar: read-only commands,
// comments, here-documents of every delimiter form, quotes,
// backslash-newlines, redirections, substitutions, control operators,
// and a write that creates a marker file, put where a parser that
// disagrees with bash would not see it.
type gen struct {
	r      *rand.Rand
	corpus []string // read-only commands of the corpus
	depth  int
}

var (
	genReadOnly = []string{"ls", "ls -la", "cat a.txt", "echo hi", "wc -l a.txt", "grep alpha a.txt",
		"head -n 1 a.txt", "true", "pwd", ":", "printf '%s\\n' x", "sort a.txt", "echo", "cat EOF", "ls sub"}
	genWrites = []string{"touch MARK", ">MARK", "echo x >MARK", "mkdir MARK", ": >MARK", "cp a.txt MARK",
		"rm a.txt", "mv a.txt MARK", "echo y >>a.txt", "tee MARK </dev/null", "printf x >MARK"}
	// genTricky are forms of read-only programs that make them run or
	// write something (found by review), kept so that a regression shows.
	genTricky = []string{"sed ':x e touch MARK' a.txt", "sed 'bx w MARK;:x' a.txt", "sed -n ':a\tw MARK' a.txt",
		"declare -a q='($(touch MARK))'", "typeset -A m='([k]=$(touch MARK))'", "sh -c 'echo &>/dev/null touch MARK'",
		"sh -c '[[ 1 > MARK ]]'", "tar -tf a.txt --checkpoint=1 --checkpoint-a=exec='touch MARK'",
		"tar -tf a.txt --use='sh -c \"touch MARK\"'", "tar -tf a.txt --index=MARK", "tar -tf a.txt --volno-file=MARK"}
	genSeps   = []string{"; ", "\n", " && ", " || ", " | ", ";\n", " \\\n", "\n\n", " &\n", "\\\n", "\r\n"}
	genDelims = []string{"EOF", "E", "_X1", "END-OF", "a.b"}
	genWords  = []string{"x", "'a b'", `"a b"`, "$'a\\tb'", `$"msg"`, "\\#", "a#b", "!x", "x!", "'!'",
		"$HOME", "${HOME}", "$((1+2))", "\"$(echo q)\"", "`echo q`", "{a,b}", "*.txt", "@(a|b)",
		"\\\nx", "x\\\ny", "\"a\\\nb\"", "'a\\\nb'", "$'a\\\nb'", "#c", "2>/dev/null", "</dev/null", "2>&1",
		"<a.txt", "<<<x", "=~", ";;", "((", "))", "$((", "$(( (1) ))", "$( (echo) )", "\\", "\"", "'", "}", "{"}
)

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

// readOnly returns a read-only command, from the built-in list or the
// corpus.
func (g *gen) readOnly() string {
	if len(g.corpus) > 0 && g.r.IntN(4) == 0 {
		return g.pick(g.corpus)
	}
	return g.pick(genReadOnly)
}

func (g *gen) write() string { return g.pick(genWrites) }

// delim returns a here-document delimiter in one of bash's forms and the
// text that ends it.
func (g *gen) delim() (word, end string) {
	d := g.pick(genDelims)
	k := 1 + g.r.IntN(max(1, len(d)-1))
	if k >= len(d) {
		k = len(d) - 1
	}
	switch g.r.IntN(9) {
	case 0:
		return "'" + d + "'", d
	case 1:
		return `"` + d + `"`, d
	case 2:
		return `\` + d, d
	case 3:
		if k > 0 {
			return d[:k] + `"` + d[k:] + `"`, d
		}
	case 4:
		if k > 0 {
			return "'" + d[:k] + "'" + d[k:], d
		}
	case 5:
		if k > 0 {
			return d[:k] + `\` + d[k:], d
		}
	case 6:
		return "$'" + d + "'", d
	}
	return d, d
}

// bodyLine returns one line of a here-document body: text, or something
// that may end the body early under bash.
func (g *gen) bodyLine(end string) string {
	k := 1
	if len(end) > 1 {
		k = 1 + g.r.IntN(len(end)-1)
	}
	switch g.r.IntN(12) {
	case 0:
		return end[:k] + "\\\n" + end[k:] // joined by bash into the delimiter
	case 1:
		return "\\\n" + end
	case 2:
		return end + "\\"
	case 3:
		return "\t" + end
	case 4:
		return end + " "
	case 5:
		return g.write()
	case 6:
		return "x \\"
	case 7:
		return "$(" + g.write() + ")"
	case 8:
		return " " + end
	case 9:
		return end + ")"
	}
	return g.pick([]string{"text", "$HOME", "a\\b", "'q'", "# not a comment", "\\$x", "`w`"})
}

func (g *gen) heredoc() string {
	word, end := g.delim()
	op := "<<"
	if g.r.IntN(3) == 0 {
		op = "<<-"
	}
	var b strings.Builder
	b.WriteString("cat " + op + word)
	switch g.r.IntN(5) {
	case 0:
		b.WriteString("; " + g.readOnly())
	case 1:
		b.WriteString(" | cat")
	case 2:
		b.WriteString(" # note")
		if g.r.IntN(2) == 0 {
			b.WriteString(" \\")
		}
	}
	b.WriteString("\n")
	for n := g.r.IntN(4); n > 0; n-- {
		b.WriteString(g.bodyLine(end) + "\n")
	}
	switch g.r.IntN(4) {
	case 0:
		b.WriteString(g.write() + "\n")
	case 1:
		b.WriteString(end[:1] + "\\\n" + end[1:] + "\n" + g.write() + "\n")
	}
	if g.r.IntN(6) != 0 {
		if op == "<<-" && g.r.IntN(2) == 0 {
			b.WriteString("\t")
		}
		b.WriteString(end)
	}
	return b.String()
}

func (g *gen) comment() string {
	c := "#" + g.pick([]string{"", " note", " x \\", "\\", " 'q", " \"q", " $(", " `", " <<EOF"})
	return c
}

func (g *gen) word() string { return g.pick(genWords) }

// simple returns a simple command: read-only, with extra words, or the
// write.
func (g *gen) simple() string {
	switch g.r.IntN(24) {
	case 0:
		return g.write()
	case 1, 2:
		return g.readOnly() + " " + g.word()
	case 3:
		return "echo " + g.word() + " " + g.word()
	case 4:
		return g.pick(genTricky)
	}
	return g.readOnly()
}

func (g *gen) stmt() string {
	if g.depth > 2 {
		return g.simple()
	}
	g.depth++
	defer func() { g.depth-- }()
	switch g.r.IntN(18) {
	case 0:
		return g.heredoc()
	case 1:
		return g.readOnly() + " " + g.comment() + "\n" + g.stmt()
	case 2:
		return "{ " + g.stmts() + "; }"
	case 3:
		return "( " + g.stmts() + " )"
	case 4:
		return "echo \"$(" + g.stmts() + ")\""
	case 5:
		return "if " + g.simple() + "; then " + g.stmts() + "; fi"
	case 6:
		return "for v in a b; do " + g.stmts() + "; done"
	case 7:
		return "case x in x) " + g.stmt() + g.pick([]string{";;", ";&", ";;&"}) + " y) " + g.stmt() + ";; esac"
	case 8:
		return "[[ x =~ " + g.pick([]string{"x", "(x|y)", "x\\ y", "( x )", "a|b", "^x$"}) + " ]] && " + g.simple()
	case 9:
		return "echo `" + g.simple() + "`"
	case 10:
		return "cat <(" + g.simple() + ")"
	case 11:
		return g.pick([]string{"shopt -s extglob", "set -H", "set -o posix", "shopt -s expand_aliases", "alias ls=touch"}) + "\n" + g.stmt()
	case 12:
		return "((" + g.simple() + ") )"
	case 13:
		return "echo $((" + g.simple() + ") )"
	}
	return g.simple()
}

func (g *gen) stmts() string {
	s := g.stmt()
	for n := g.r.IntN(3); n > 0; n-- {
		s += g.pick(genSeps) + g.stmt()
	}
	return s
}

// program returns one generated program.
func (g *gen) program() string {
	p := g.stmts()
	if g.r.IntN(3) == 0 {
		p += g.pick(genSeps) + g.comment()
	}
	if g.r.IntN(4) == 0 {
		p += "\n" + g.write()
	}
	return p
}

// oracleFind is one counterexample.
type oracleFind struct {
	prog    string
	stdin   bool
	changed []string
	reasons []classify.Reason
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func readOnlyCorpus(t testing.TB) []string {
	var out []string
	for _, r := range loadCorpus(t) {
		if r.Want == classify.ReadOnly && !strings.Contains(r.Cmd, "/") {
			out = append(out, r.Cmd)
		}
	}
	return out
}

// TestBashOracle generates programs with a fixed seed (20,000 by
// default, ACPMUX_ORACLE_N to change), and runs every one that Command
// calls read-only in real bash, failing if any changed a file.
func TestBashOracle(t *testing.T) {
	bash := bashPath(t)
	n := envInt("ACPMUX_ORACLE_N", oracleDefaultN)
	seed := uint64(envInt("ACPMUX_ORACLE_SEED", 1))
	if testing.Short() && os.Getenv("ACPMUX_ORACLE_N") == "" {
		n = 2000
	}
	corpus := readOnlyCorpus(t)
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed)), corpus: corpus}
	progs := make(chan string, 64)
	var (
		mu       sync.Mutex
		finds    []oracleFind
		ran      atomic.Int64
		readOnly atomic.Int64
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for p := range progs {
				v := classify.Command(p)
				if v.Class != classify.ReadOnly {
					continue
				}
				readOnly.Add(1)
				stdin := len(p)%2 == 0
				ran.Add(1)
				if ch := runInBash(t, bash, p, stdin); len(ch) > 0 {
					mu.Lock()
					finds = append(finds, oracleFind{p, stdin, ch, v.Reasons})
					mu.Unlock()
				}
			}
		})
	}
	for range n {
		progs <- g.program()
	}
	close(progs)
	wg.Wait()
	t.Logf("bash oracle: %d programs (seed %d), %d read-only run in bash, %d changed a file, %v",
		n, seed, ran.Load(), len(finds), time.Since(start).Round(time.Millisecond))
	if os.Getenv("ACPMUX_ORACLE_RECORD") != "" && len(finds) > 0 {
		recordFinds(t, finds)
	}
	for i, f := range finds {
		if i == 20 {
			t.Errorf("... and %d more", len(finds)-20)
			break
		}
		t.Errorf("read-only, but bash (stdin=%v) changed %v:\n%q\nreasons: %v", f.stdin, f.changed, f.prog, f.reasons)
	}
}

// recordFinds appends the counterexamples to testdata/classify/oracle.jsonl.
func recordFinds(t *testing.T, finds []oracleFind) {
	f, err := os.OpenFile(filepath.Join("..", "testdata", "classify", "oracle.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, x := range finds {
		err := enc.Encode(struct {
			Cmd    string `json:"cmd"`
			Want   string `json:"want"`
			Why    string `json:"why"`
			Source string `json:"source"`
		}{x.prog, "unknown", "bash changed files (" + strings.Join(x.changed, ", ") + ")", "bash oracle (TestBashOracle)"})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestOracleCounterexamples runs every counterexample the oracle ever
// found (testdata/classify/oracle.jsonl) and every row of the corpus
// that Command calls read-only under bash, both as bash -c and as a
// script on stdin, and fails if any changes a file.
func TestOracleCounterexamples(t *testing.T) {
	bash := bashPath(t)
	for _, r := range loadCorpus(t) {
		if classify.Command(r.Cmd).Class != classify.ReadOnly {
			continue
		}
		if strings.Contains(r.Cmd, "/") && !strings.Contains(r.file, "oracle") {
			continue // absolute paths outside the sandbox: not this test's business
		}
		for _, stdin := range []bool{false, true} {
			if ch := runInBash(t, bash, r.Cmd, stdin); len(ch) > 0 {
				t.Errorf("%s:%d: read-only, but bash (stdin=%v) changed %v: %q", r.file, r.line, stdin, ch, r.Cmd)
			}
		}
	}
}
