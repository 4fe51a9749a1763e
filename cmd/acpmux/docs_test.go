package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outOfRepoCitations are the spellings of documents that are not in this
// repository (the team's design notes, seeds, references and shared
// workspace). Built by concatenation so this file does not match itself.
var outOfRepoCitations = []string{
	"DESIGN" + ".md", "STYLE" + ".md", "seeds" + "/", "reference" + "/",
	"shared" + "/", "reliability" + ".md",
}

// TestNoCitationOfFilesOutsideTheRepository: no page under docs/ (or any
// other .md, .html or .js file) and no comment in Go code cites a file that
// is not in this repository; they cite the ACP spec, a docs/ page or
// nothing.
func TestNoCitationOfFilesOutsideTheRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if ext != ".go" && ext != ".md" && ext != ".html" && ext != ".js" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if ext == ".go" {
				i := strings.Index(line, "//")
				if i < 0 {
					continue
				}
				line = line[i:]
			}
			for _, c := range outOfRepoCitations {
				if strings.Contains(line, c) {
					rel, _ := filepath.Rel(root, path)
					t.Errorf("%s:%d cites %q, which is not in this repository: %s", rel, n, c, strings.TrimSpace(line))
				}
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}
