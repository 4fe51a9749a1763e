package classify

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The divergence guard. mvdan.cc/sh and bash are two parsers of one
// language; where they may disagree on where a command, a comment or a
// here-document body begins or ends, the tree the classifier walks is not
// the program bash runs, so nothing in that source can be proven
// read-only. guard re-derives those boundaries from the raw text with
// bash's own rules (bash(1), "COMMENTS", "Here Documents", "QUOTING") and
// marks the source Unknown wherever the parser's tree says otherwise, or
// wherever a construct is known to be lexed differently:
//
//   - a comment runs from a '#' at the start of a word to the next
//     newline, whatever precedes that newline (a trailing backslash does
//     not continue a comment in bash; it does in mvdan.cc/sh);
//   - a '#' at the start of a word that the parser did not read as a
//     comment;
//   - a here-document body starts after the newline that ends the line of
//     its operator (or after the previous body on that line) and ends at
//     the first line equal to the delimiter (leading tabs removed for
//     <<-); any backslash-newline in a body, any delimiter that is not a
//     plain name (quoted or not), and any body whose extent differs from
//     the parser's;
//   - a backslash-newline anywhere but between words or inside a plain
//     word (in quotes, substitutions, parameter and arithmetic
//     expansions, [[ ]], comments and here-documents).
//
// Constructs whose meaning bash decides at run time (`$"…"`, extglob
// patterns, history expansion, options that change how later lines are
// parsed) are refused where the classifier meets them (word.go,
// builtins.go). Control characters, NUL and invalid UTF-8 are refused
// before parsing (badInput). TestBashOracle checks the whole against
// real bash.

// span is a range [pos, end) of the source with the construct it holds.
type span struct {
	pos, end int
	what     string
}

// heredoc is one here-document redirection found by the parser.
type heredoc struct {
	r        *syntax.Redirect
	op       int // offset of the operator
	wordEnd  int // end of the delimiter word
	dash     bool
	delim    string
	delimBad string // why the delimiter is refused, or ""
}

// guardScan holds what one walk of the tree collects for the guard.
type guardScan struct {
	spans    []span
	comments []*syntax.Comment
	heredocs []heredoc
}

// needsGuard reports whether src holds any byte the guard looks at: a
// comment, a backslash-newline or a here-document. Most commands hold
// none, and skip the walk.
func needsGuard(src string) bool {
	return strings.IndexByte(src, '#') >= 0 || strings.Contains(src, "\\\n") || strings.Contains(src, "<<")
}

// guard marks c.src Unknown wherever mvdan.cc/sh and bash may disagree
// on its structure. f is c.src parsed with comments kept.
func (c *classifier) guard(f *syntax.File) {
	if !needsGuard(c.src) {
		return
	}
	g := &guardScan{}
	syntax.Walk(f, g.visit)
	c.guardComments(g)
	c.guardHeredocs(g)
	c.guardContinuations(g)
}

func (g *guardScan) visit(n syntax.Node) bool {
	if n == nil {
		return true
	}
	add := func(what string) {
		g.spans = append(g.spans, span{int(n.Pos().Offset()), int(n.End().Offset()), what})
	}
	switch x := n.(type) {
	case *syntax.Comment:
		g.comments = append(g.comments, x)
		add("a comment")
	case *syntax.SglQuoted:
		add("single quotes")
	case *syntax.DblQuoted:
		add("double quotes")
	case *syntax.ParamExp:
		add("a parameter expansion")
	case *syntax.ArithmExp:
		add("an arithmetic expansion")
	case *syntax.ArithmCmd:
		add("an arithmetic command")
	case *syntax.LetClause:
		add("let")
	case *syntax.TestClause:
		add("[[ ]]")
	case *syntax.ExtGlob:
		add("an extglob pattern")
	case *syntax.CmdSubst:
		if x.Backquotes {
			add("a backquoted command substitution")
		}
	case *syntax.Redirect:
		if x.Op == syntax.Hdoc || x.Op == syntax.DashHdoc {
			h := heredoc{r: x, op: int(x.OpPos.Offset()), wordEnd: int(x.Word.End().Offset()), dash: x.Op == syntax.DashHdoc}
			h.delim, h.delimBad = heredocDelim(x.Word)
			g.heredocs = append(g.heredocs, h)
			g.spans = append(g.spans, span{int(x.Word.Pos().Offset()), h.wordEnd, "a here-document delimiter"})
			if x.Hdoc != nil {
				g.spans = append(g.spans, span{int(x.Hdoc.Pos().Offset()), int(x.Hdoc.End().Offset()), "a here-document body"})
			}
		}
	}
	return true
}

// heredocDelim returns the delimiter bash compares body lines with: the
// word with quotes removed. Only plain names, quoted or not, are
// accepted; anything else returns a reason.
func heredocDelim(w *syntax.Word) (string, string) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			// Quote removal: \E is E (and makes the delimiter quoted).
			for i := 0; i < len(x.Value); i++ {
				if x.Value[i] == '\\' && i+1 < len(x.Value) {
					i++
				}
				b.WriteByte(x.Value[i])
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				return "", "a here-document delimiter in $'…'"
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			if x.Dollar || len(x.Parts) > 1 {
				return "", "a here-document delimiter with an expansion"
			}
			if len(x.Parts) == 1 {
				l, ok := x.Parts[0].(*syntax.Lit)
				if !ok {
					return "", "a here-document delimiter with an expansion"
				}
				b.WriteString(l.Value)
			}
		default:
			return "", "a here-document delimiter with an expansion"
		}
	}
	d := b.String()
	if d == "" {
		return "", "an empty here-document delimiter"
	}
	for i := 0; i < len(d); i++ {
		ch := d[i]
		if !(ch == '_' || ch == '-' || ch == '.' || '0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z') {
			return "", fmt.Sprintf("a here-document delimiter with %q, which bash and the parser may match differently", ch)
		}
	}
	return d, ""
}

// guardComments checks each comment the parser found against bash's
// rule, and looks for a '#' that bash reads as a comment and the parser
// did not.
func (c *classifier) guardComments(g *guardScan) {
	src := c.src
	known := make(map[int]bool, len(g.comments))
	for _, cm := range g.comments {
		h := int(cm.Hash.Offset())
		known[h] = true
		line := src[h:]
		if nl := strings.IndexByte(line, '\n'); nl >= 0 {
			line = line[:nl]
		}
		switch {
		case h > 0 && !wordBoundary(src[h-1]):
			c.diverge(h, h+1, "a # inside a word that the parser read as a comment")
		case "#"+cm.Text != line:
			c.diverge(h, h+len(line), "a comment that bash ends at the newline and the parser carries on")
		case strings.HasSuffix(line, `\`):
			c.diverge(h, h+len(line), "a comment that ends in a backslash: bash ends it at the newline and runs the next line")
		}
	}
	sc := g.cursor()
	for i := 0; i < len(src); i++ {
		if src[i] != '#' || known[i] || (i > 0 && !wordBoundary(src[i-1])) || sc.inside(i) != "" {
			continue
		}
		c.diverge(i, i+1, "a # at the start of a word that bash reads as a comment and the parser does not")
	}
}

// wordBoundary reports whether a word can start after the byte ch:
// blanks, newlines and bash's metacharacters.
func wordBoundary(ch byte) bool {
	return strings.IndexByte(" \t\n;&|()<>", ch) >= 0
}

// spanCursor answers, for offsets given in increasing order, which
// collected span holds each: the spans sorted by start (outer first) are
// pushed as the offset passes their start and popped once it passes their
// end, so every query costs amortised O(1) (a scan per query made a
// 256 KiB input of many quotes and continuations take half a second).
type spanCursor struct {
	spans []span // by pos, then by end descending
	next  int
	stack []span
}

func (g *guardScan) cursor() *spanCursor {
	sorted := slices.Clone(g.spans)
	slices.SortFunc(sorted, func(a, b span) int { return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(b.end, a.end)) })
	return &spanCursor{spans: sorted}
}

// inside returns the construct of the innermost span holding offset i
// (spans of one tree nest), or "". Offsets must not decrease.
func (sc *spanCursor) inside(i int) string {
	for sc.next < len(sc.spans) && sc.spans[sc.next].pos <= i {
		sc.stack = append(sc.stack, sc.spans[sc.next])
		sc.next++
	}
	for len(sc.stack) > 0 && sc.stack[len(sc.stack)-1].end <= i {
		sc.stack = sc.stack[:len(sc.stack)-1]
	}
	if len(sc.stack) == 0 {
		return ""
	}
	return sc.stack[len(sc.stack)-1].what
}

// guardHeredocs finds each here-document body where bash finds it and
// compares it with the parser's.
func (c *classifier) guardHeredocs(g *guardScan) {
	src := c.src
	cursor := -1 // where the next body of the same line begins
	for _, h := range g.heredocs {
		if h.delimBad != "" {
			c.diverge(h.op, h.wordEnd, h.delimBad)
			cursor = -1
			continue
		}
		start := cursor
		if start < 0 || h.op >= start {
			nl := strings.IndexByte(src[h.wordEnd:], '\n')
			if nl < 0 {
				c.diverge(h.op, h.wordEnd, "a here-document with no body")
				return
			}
			start = h.wordEnd + nl + 1
		}
		lineStart, lineEnd := heredocEnd(src, start, h.delim, h.dash)
		switch {
		case lineStart < 0:
			c.diverge(h.op, h.wordEnd, "a here-document whose delimiter line bash never finds")
			return
		case strings.Contains(src[start:lineStart], "\\\n"):
			at := start + strings.Index(src[start:lineStart], "\\\n")
			c.diverge(at, at+2, "a backslash-newline in a here-document body: bash may join it and end the body early")
		case h.r.Hdoc == nil && lineStart != start,
			h.r.Hdoc != nil && (int(h.r.Hdoc.Pos().Offset()) != start || int(h.r.Hdoc.End().Offset()) != lineEnd):
			c.diverge(h.op, h.wordEnd, "a here-document whose body bash and the parser delimit differently")
		}
		cursor = min(lineEnd+1, len(src))
	}
}

// heredocEnd returns the offsets of the first line at or after start that
// ends a here-document with delimiter delim: its start and its end
// (before the newline). -1, -1 if there is none.
func heredocEnd(src string, start int, delim string, dash bool) (int, int) {
	for at := start; at <= len(src); {
		end := strings.IndexByte(src[at:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += at
		}
		line := src[at:end]
		if dash {
			line = strings.TrimLeft(line, "\t")
		}
		if line == delim {
			return at, end
		}
		if end == len(src) {
			break
		}
		at = end + 1
	}
	return -1, -1
}

// guardContinuations refuses a backslash-newline anywhere but between
// words or inside a plain word.
func (c *classifier) guardContinuations(g *guardScan) {
	src := c.src
	sc := g.cursor()
	for i := strings.Index(src, "\\\n"); i >= 0; {
		// Comments and here-document bodies were checked above.
		if what := sc.inside(i); what != "" && what != "a comment" && what != "a here-document body" {
			c.diverge(i, i+2, "a backslash-newline inside "+what+", where bash and the parser may join lines differently")
		}
		next := strings.Index(src[i+2:], "\\\n")
		if next < 0 {
			break
		}
		i += 2 + next
	}
}

// diverge records, for the bytes [pos, end) of c.src, that bash and the
// parser may read the source differently: the verdict is Unknown at
// least, and Verdict.Diverges is set.
func (c *classifier) diverge(pos, end int, why string) {
	c.res.diverges = true
	c.addAt(Unknown, pos, end, why)
}
