package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/acpmux/acpmux/"

// backticked finds the `names` of a markdown table cell.
var backticked = regexp.MustCompile("`([^`]+)`")

// markdownRows returns the cells of each row of the first table in md
// whose header row starts with header, keyed by the name in its first cell.
func markdownRows(t *testing.T, md, header string) map[string][]string {
	t.Helper()
	i := strings.Index(md, header)
	if i < 0 {
		t.Fatalf("no table with header %q", header)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(md[i:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if m := backticked.FindStringSubmatch(cells[0]); m != nil {
			rows[m[1]] = cells
		}
	}
	return rows
}

// packageImports is each package of the module (outside bench/) with its
// direct imports from the module and from elsewhere (not the standard
// library), as go list reports them, without the module path.
func packageImports(t *testing.T) map[string][2][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports ","}}`, "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][2][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, _ := strings.Cut(line, "|")
		p := strings.TrimPrefix(path, modulePath)
		if p == "bench" || strings.HasPrefix(p, "bench/") {
			continue
		}
		var own, other []string
		for _, imp := range strings.Split(imports, ",") {
			switch first, _, _ := strings.Cut(imp, "/"); {
			case strings.HasPrefix(imp, modulePath):
				own = append(own, strings.TrimPrefix(imp, modulePath))
			case strings.Contains(first, "."):
				other = append(other, imp)
			}
		}
		pkgs[p] = [2][]string{own, other}
	}
	return pkgs
}

// names are the backticked names of a cell, sorted.
func names(cell string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

// TestArchitectureImportsAreTrue: docs/architecture.md has a row for
// every package of the module in its package table, and its import table
// says exactly what each package imports directly, as go list reports it.
func TestArchitectureImportsAreTrue(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	described := markdownRows(t, md, "| package | what it holds |")
	imports := markdownRows(t, md, "| package | imports of this module | other imports |")
	pkgs := packageImports(t)
	for p, got := range pkgs {
		if _, ok := described[p]; !ok {
			t.Errorf("the package table has no row for %s", p)
		}
		row, ok := imports[p]
		if !ok || len(row) != 3 {
			t.Errorf("the import table has no row for %s", p)
			continue
		}
		slices.Sort(got[0])
		slices.Sort(got[1])
		if doc := names(row[1]); !slices.Equal(doc, got[0]) {
			t.Errorf("%s imports of this module: the page says %v, go list %v", p, doc, got[0])
		}
		if doc := names(row[2]); !slices.Equal(doc, got[1]) {
			t.Errorf("%s other imports: the page says %v, go list %v", p, doc, got[1])
		}
	}
	for p := range imports {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("the import table names %s, which is no package", p)
		}
	}
}

// TestEverySubcommandIsListed: the cmd/acpmux row of docs/architecture.md
// and the command table of README.md name every subcommand acpmux --help
// lists.
func TestEverySubcommandIsListed(t *testing.T) {
	arch, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := markdownRows(t, string(arch), "| package | what it holds |")["cmd/acpmux"]
	if row == nil {
		t.Fatal("no cmd/acpmux row in docs/architecture.md")
	}
	listed := map[string]bool{}
	for _, n := range names(row[1]) {
		listed[strings.Fields(n)[0]] = true
	}
	for name, c := range commands {
		if c.hidden {
			continue
		}
		if !listed[name] {
			t.Errorf("docs/architecture.md's cmd/acpmux row does not name %s", name)
		}
		if !strings.Contains(string(readme), "| `acpmux "+name) {
			t.Errorf("README.md's command table has no row for acpmux %s", name)
		}
	}
}
