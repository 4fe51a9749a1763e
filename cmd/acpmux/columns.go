package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/acpmux/acpmux/confirm/store"
)

// writeColumns writes rows as lines that start with indent, each column
// padded to its widest cell and two spaces apart, with no trailing space
// (an empty last cell leaves none). Widths count runes.
func writeColumns(w io.Writer, indent string, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// trimmed writes to w what it is given with the spaces before each
// newline removed ("cwd       " of an empty cwd); spaces a Write ends
// with, before no newline, are kept.
type trimmed struct{ w io.Writer }

func (t trimmed) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	var b strings.Builder
	for _, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		if nl {
			body = strings.TrimRight(body, " ") + "\n"
		}
		b.WriteString(body)
	}
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeJournal writes a decision's journal events in aligned columns:
// sequence number, local time, type, who (the person via the host) and
// detail (through safe).
func writeJournal(w io.Writer, events []store.Event) {
	rows := make([][]string, 0, len(events))
	for _, e := range events {
		who := ""
		if e.Host != "" || e.Person != "" {
			who = answerer(e.Person, e.Host)
		}
		rows = append(rows, []string{fmt.Sprintf("%3d", e.Seq), e.At.Local().Format("15:04:05.000"), string(e.Type), who, safe(e.Detail)})
	}
	writeColumns(w, "  ", rows)
}
