package classify

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// nodeSamples lists every node type of mvdan.cc/sh/v3/syntax with a Bash
// snippet that contains it and the class that snippet must get. An empty
// snippet marks a type the Bash parser never produces; those are checked
// by TestUnproducedNodes.
var nodeSamples = map[string]struct {
	src  string
	want Class
}{
	"File":         {"ls", ReadOnly},
	"Comment":      {"ls # rm x", ReadOnly},
	"Stmt":         {"ls", ReadOnly},
	"Assign":       {"x=1", ReadOnly},
	"Redirect":     {"ls > out", Write},
	"CallExpr":     {"rm x", Write},
	"Subshell":     {"(ls)", ReadOnly},
	"Block":        {"{ ls; }", ReadOnly},
	"IfClause":     {"if true; then rm x; fi", Write},
	"WhileClause":  {"while false; do ls; done", ReadOnly},
	"ForClause":    {"for f in a b; do cat $f; done", ReadOnly},
	"WordIter":     {"for f in a; do rm $f; done", Write},
	"CStyleLoop":   {"for ((i=0; i<3; i++)); do ls; done", Unknown},
	"BinaryCmd":    {"ls && rm x", Write},
	"FuncDecl":     {"f() { ls; }", Unknown},
	"Word":         {"echo hi", ReadOnly},
	"Lit":          {"echo hi", ReadOnly},
	"SglQuoted":    {"echo 'hi'", ReadOnly},
	"DblQuoted":    {`echo "hi"`, ReadOnly},
	"CmdSubst":     {"echo $(ls)", Unknown},
	"ParamExp":     {"echo $HOME", ReadOnly},
	"ArithmExp":    {"echo $((1+2))", ReadOnly},
	"ArithmCmd":    {"((x++))", Unknown},
	"BinaryArithm": {"echo $((1+2))", ReadOnly},
	"UnaryArithm":  {"echo $((-1))", ReadOnly},
	"ParenArithm":  {"echo $(((1)))", ReadOnly},
	"CaseClause":   {"case x in a) ls;; esac", ReadOnly},
	"CaseItem":     {"case x in a) rm y;; esac", Write},
	"TestClause":   {"[[ -f x ]]", ReadOnly},
	"BinaryTest":   {"[[ a == b ]]", ReadOnly},
	"UnaryTest":    {"[[ -v x ]]", ReadOnly},
	"ParenTest":    {"[[ ( -f x ) ]]", ReadOnly},
	"DeclClause":   {"declare -x y=1", ReadOnly},
	"ArrayExpr":    {"a=(1 2)", ReadOnly},
	"ArrayElem":    {"a=([0]=x)", ReadOnly},
	"ExtGlob":      {"ls @(a|b)", Unknown}, // bash parses it only with extglob on
	"ProcSubst":    {"cat <(ls)", Unknown},
	"TimeClause":   {"time ls", ReadOnly},
	"CoprocClause": {"coproc ls", Unknown},
	"LetClause":    {"let x=1", Unknown},
	"Slice":        {"echo ${x:1:2}", ReadOnly},
	"Replace":      {"echo ${x/a/b}", ReadOnly},
	"Expansion":    {"echo ${x:-y}", ReadOnly},
	"BraceExp":     {"", Unknown},
	"FlagsArithm":  {"", Unknown},
	"TestDecl":     {"", Unknown},
}

// syntaxNodeTypes returns the names of the types in the syntax package
// that implement syntax.Node, read from the package's source.
func syntaxNodeTypes(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "mvdan.cc/sh/v3/syntax").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	methods := map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
			if !ok {
				continue
			}
			id, ok := star.X.(*ast.Ident)
			if !ok {
				continue
			}
			if methods[id.Name] == nil {
				methods[id.Name] = map[string]bool{}
			}
			methods[id.Name][fn.Name.Name] = true
		}
	}
	var names []string
	for name, m := range methods {
		if m["Pos"] && m["End"] && ast.IsExported(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) < 30 {
		t.Fatalf("found only %d node types in %s: %v", len(names), dir, names)
	}
	return names
}

// TestEveryNodeTypeHandled checks the table above against the syntax
// package: a node type added in a new version fails here until it is
// listed, and its sample classified.
func TestEveryNodeTypeHandled(t *testing.T) {
	for _, name := range syntaxNodeTypes(t) {
		if _, ok := nodeSamples[name]; !ok {
			t.Errorf("syntax.%s implements syntax.Node but has no sample in nodeSamples", name)
		}
	}
	p := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
	for name, s := range nodeSamples {
		if s.src == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			f, err := p.Parse(strings.NewReader(s.src), "")
			if err != nil {
				t.Fatalf("sample %q does not parse: %v", s.src, err)
			}
			found := name == "File"
			syntax.Walk(f, func(n syntax.Node) bool {
				if n == nil {
					return true
				}
				if reflect.TypeOf(n).Elem().Name() == name {
					found = true
				}
				// Slice, Replace and Expansion are fields of ParamExp,
				// not visited by Walk.
				v := reflect.ValueOf(n).Elem()
				for i := range v.NumField() {
					if fv := v.Field(i); fv.Kind() == reflect.Pointer && !fv.IsNil() && fv.Type().Elem().Name() == name {
						found = true
					}
				}
				return true
			})
			if name == "Comment" {
				found = len(f.Stmts) > 0 && len(f.Stmts[0].Comments) > 0
			}
			if !found {
				t.Fatalf("sample %q holds no syntax.%s", s.src, name)
			}
			if got := Command(s.src).Class; got != s.want {
				t.Errorf("Command(%q) = %v, want %v", s.src, got, s.want)
			}
		})
	}
}

// TestUnproducedNodes classifies the node types the Bash parser does not
// produce, built by hand: each must be Unknown.
func TestUnproducedNodes(t *testing.T) {
	lit := func(s string) *syntax.Lit { return &syntax.Lit{Value: s} }
	word := func(parts ...syntax.WordPart) *syntax.Word { return &syntax.Word{Parts: parts} }
	echo := func(w *syntax.Word) syntax.Command {
		return &syntax.CallExpr{Args: []*syntax.Word{word(lit("echo")), w}}
	}
	cases := map[string]syntax.Command{
		"TestDecl":    &syntax.TestDecl{Description: word(lit("t")), Body: &syntax.Stmt{Cmd: echo(word(lit("x")))}},
		"BraceExp":    echo(word(&syntax.BraceExp{Elems: []*syntax.Word{word(lit("a")), word(lit("b"))}})),
		"FlagsArithm": &syntax.ArithmCmd{X: &syntax.FlagsArithm{Flags: lit("k"), X: word(lit("1"))}},
	}
	for name, cmd := range cases {
		if got := classifyCommand(cmd); got != Unknown {
			t.Errorf("%s: class %v, want unknown", name, got)
		}
	}
}

// Types that embed a node pointer implement the node interfaces (the
// unexported marker methods are promoted) but are none of the cases of
// the walker's type switches: they stand for node types a future
// version of the syntax package may add.
type (
	futureCommand struct{ *syntax.CallExpr }
	futurePart    struct{ *syntax.Lit }
	futureArithm  struct{ *syntax.Word }
	futureTest    struct{ *syntax.Word }
	futureLoop    struct{ *syntax.WordIter }
)

func TestUnknownNodeTypes(t *testing.T) {
	w := &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: "1"}}}
	echo := &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{Value: "echo"}}}}}
	cases := map[string]syntax.Command{
		"Command": futureCommand{echo},
		"WordPart": &syntax.CallExpr{Args: []*syntax.Word{echo.Args[0],
			{Parts: []syntax.WordPart{futurePart{&syntax.Lit{Value: "x"}}}}}},
		"ArithmExpr":    &syntax.ArithmCmd{X: futureArithm{w}},
		"TestExpr":      &syntax.TestClause{X: futureTest{w}},
		"Loop":          &syntax.ForClause{Loop: futureLoop{&syntax.WordIter{Name: &syntax.Lit{Value: "i"}}}},
		"RedirOperator": &syntax.CallExpr{Args: echo.Args},
	}
	for name, cmd := range cases {
		t.Run(name, func(t *testing.T) {
			st := &syntax.Stmt{Cmd: cmd}
			if name == "RedirOperator" {
				st.Redirs = []*syntax.Redirect{{Op: syntax.RedirOperator(255), Word: w}}
			}
			c := &classifier{exact: true, res: &result{}}
			c.stmt(st)
			if got := c.verdict().Class; got != Unknown {
				t.Errorf("class %v, want unknown", got)
			}
		})
	}
}

func classifyCommand(cmd syntax.Command) Class {
	c := &classifier{exact: true, res: &result{}}
	c.stmt(&syntax.Stmt{Cmd: cmd})
	return c.verdict().Class
}
