package classify

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// redirect classifies one redirection. Output to anything but /dev/null
// is Write, whatever the file; input from a static file is read-only;
// /dev/tcp and /dev/udp open network connections.
func (c *classifier) redirect(r *syntax.Redirect) {
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		c.add(Unknown, r, "{var} redirection assigns a file descriptor variable")
	}
	if r.Hdoc != nil {
		c.word(r.Hdoc) // classifies expansions in an unquoted here-document
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		// The delimiter word is not expanded.
	case syntax.WordHdoc:
		c.word(r.Word)
	case syntax.RdrIn:
		a := c.word(r.Word)
		switch {
		case !a.static:
			c.add(Unknown, r, "input redirection from a file named at run time (it could be /dev/tcp)")
		case isNetDev(a.text):
			c.add(Write, r, "redirection to /dev/tcp or /dev/udp opens a network connection")
		}
	case syntax.DplIn, syntax.DplOut:
		a := c.word(r.Word)
		switch {
		case a.static && isFD(a.text):
		case r.Op == syntax.DplOut:
			c.add(Write, r, ">&word with a file name writes the file")
		default:
			c.add(Unknown, r, "<& with something other than a file descriptor")
		}
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.AppAll,
		syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut:
		a := c.word(r.Word)
		if !a.is("/dev/null") {
			why := "output redirection writes a file"
			if r.Op == syntax.RdrInOut {
				why = "<> opens the file for writing and creates it"
			}
			if a.static && isNetDev(a.text) {
				why = "redirection to /dev/tcp or /dev/udp opens a network connection"
			}
			c.add(Write, r, why)
		}
	default:
		c.add(Unknown, r, "unhandled redirection "+r.Op.String())
	}
}

// isFD reports whether s names a file descriptor for <& and >&: digits,
// "-" to close, or digits then "-" to move.
func isFD(s string) bool {
	return s == "-" || isDigits(strings.TrimSuffix(s, "-"))
}

func isNetDev(s string) bool {
	return strings.HasPrefix(s, "/dev/tcp/") || strings.HasPrefix(s, "/dev/udp/")
}
