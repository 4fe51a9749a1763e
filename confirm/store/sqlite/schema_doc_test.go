package sqlite

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsListEveryStoreTable: the "Tables:" list of docs/decisions.md
// names every table of the SQLite schema with its columns in order, and
// no other table.
func TestDocsListEveryStoreTable(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	data, err := os.ReadFile("../../../docs/decisions.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(data)), " ")
	_, list, ok := strings.Cut(doc, "- Tables: ")
	if !ok {
		t.Fatal(`docs/decisions.md has no "- Tables: " list`)
	}
	list, _, _ = strings.Cut(list, " - ")
	for _, name := range tables {
		var cols []string
		crows, err := s.db.Query(`SELECT name FROM pragma_table_info(?) ORDER BY cid`, name)
		if err != nil {
			t.Fatal(err)
		}
		for crows.Next() {
			var c string
			crows.Scan(&c)
			cols = append(cols, c)
		}
		crows.Close()
		if want := "`" + name + "(" + strings.Join(cols, ", ") + ")`"; !strings.Contains(list, want) {
			t.Errorf("docs/decisions.md does not list %s", want)
		}
	}
	if n := len(regexp.MustCompile("`[a-z_]+\\(").FindAllString(list, -1)); n != len(tables) {
		t.Errorf("docs/decisions.md lists %d tables, the schema has %d: %v", n, len(tables), tables)
	}
}
