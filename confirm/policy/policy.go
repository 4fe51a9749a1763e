package policy

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Decision is what a rule decides (docs/policy.md): [DecisionAllow],
// [DecisionAsk] or [DecisionDeny]; "" in a [Verdict] means no rule matched.
type Decision string

// The decisions of a rule.
const (
	DecisionAllow Decision = "allow"
	DecisionAsk   Decision = "ask"
	DecisionDeny  Decision = "deny"
)

// Rule is one [[rule]] table of a policy file. Every matcher is optional
// and takes a string or a non-empty array of strings; a rule matches an
// item when every matcher it has matches (an array matches when any element
// does). An empty array is refused by Parse.
// Globs: "*" matches any run of characters and "?" one character; in Path,
// "*" stops at "/" and "**" crosses it.
type Rule struct {
	Name     string   `toml:"name"`     // required, unique; recorded as decidedBy "rule:NAME"
	Decision Decision `toml:"decision"` // allow, ask or deny
	Kind     strList  `toml:"kind"`     // ACP tool kinds: read, edit, delete, move, search, execute, think, fetch, switch_mode, other
	Command  strList  `toml:"command"`  // globs over the shell command as acpmux parsed it
	Title    strList  `toml:"title"`    // globs over the tool call title
	Class    strList  `toml:"class"`    // read-only, write, unknown
	Mode     strList  `toml:"mode"`     // gate modes: plan, default
	Path     strList  `toml:"path"`     // globs over locations[].path and diff paths
	Agent    strList  `toml:"agent"`    // agent names (the agent command's base name)

	// Who may answer what an ask rule matches (docs/policy.md, "Approvers
	// and quorum"); only on decision = "ask".
	Approvers []string `toml:"approvers"` // person names (docs/tokens.md); empty: anyone who may answer
	Quorum    int      `toml:"quorum"`    // distinct people who must choose the same allow option; 0 or 1: one
	// RequesterMayApprove false keeps the person whose prompt led to the
	// request from answering it; unset means true.
	RequesterMayApprove *bool `toml:"requester_may_approve"`
}

// strList is a matcher value: a TOML string or array of strings.
type strList []string

// UnmarshalTOML implements toml.Unmarshaler.
func (l *strList) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		*l = strList{x}
		return nil
	case []any:
		out := make(strList, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("want strings, got %T", e)
			}
			out = append(out, s)
		}
		*l = out
		return nil
	}
	return fmt.Errorf("want a string or an array of strings, got %T", v)
}

// Policy is a parsed policy file: its rules in file order. The zero value
// (no rules) asks for everything. A Policy is immutable once parsed.
type Policy struct {
	Source string // the file it came from, for logs
	Rules  []Rule
}

// ErrInvalid wraps every error of a malformed policy file.
var ErrInvalid = errors.New("invalid policy")

// Load reads and parses the policy file path (TOML; docs/policy.md),
// which must be a regular file of at most MaxFileBytes; a FIFO, a
// directory, a device or a larger file is an error, and Load never
// blocks waiting for one. Errors wrap ErrInvalid and name the file, the rule
// and the line when known.
func Load(path string) (*Policy, error) {
	data, err := readPolicyFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p.Source = path
	return p, nil
}

var (
	validKinds   = set("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other")
	validClasses = set("read-only", "write", "unknown")
	validModes   = set("plan", "default")
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// Parse parses policy TOML: only [[rule]] tables with the keys of
// Rule. An unknown key, a missing or duplicate name, an unknown decision,
// kind, class or mode, an empty array in any matcher, or a malformed glob
// is an error wrapping ErrInvalid that names the rule (its number, name and
// the line of its [[rule]] header).
func Parse(data []byte) (*Policy, error) {
	var f struct {
		Rule []Rule `toml:"rule"`
	}
	if depth, line := nesting(data); depth > MaxNesting {
		// The TOML decoder takes time quadratic in the nesting of inline
		// tables and arrays (a 600 KB file would not finish); a policy
		// never needs more than a few levels.
		return nil, fmt.Errorf("%w: line %d: arrays and inline tables nested %d deep, more than %d", ErrInvalid, line, depth, MaxNesting)
	}
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	lines := ruleLines(string(data))
	if len(lines) != len(f.Rule) {
		lines = nil // rules written some other way (an inline array): no lines
	}
	if und := md.Undecoded(); len(und) > 0 {
		if i, ok := unknownKeyRule(data, und[0]); ok {
			return nil, ruleError(i, f.Rule[i].Name, lines, fmt.Errorf("unknown key %q", und[0][1]))
		}
		return nil, fmt.Errorf("%w: unknown key %q", ErrInvalid, und[0].String())
	}
	names := map[string]bool{}
	for i, r := range f.Rule {
		if err := checkRule(r, names); err != nil {
			return nil, ruleError(i, r.Name, lines, err)
		}
	}
	return &Policy{Rules: f.Rule}, nil
}

// ruleError wraps err, found in the rule at index i named name, in
// ErrInvalid with the rule's number, name and (when lines is not nil) the
// line of its [[rule]] header.
func ruleError(i int, name string, lines []int, err error) error {
	if lines != nil {
		return fmt.Errorf("%w: rule %d (%q, line %d): %v", ErrInvalid, i+1, name, lines[i], err)
	}
	return fmt.Errorf("%w: rule %d (%q): %v", ErrInvalid, i+1, name, err)
}

// unknownKeyRule returns the index of the first rule of TOML data that
// holds the undecoded key key (such as rule.comand), or false when key is
// not inside a rule.
func unknownKeyRule(data []byte, key toml.Key) (int, bool) {
	if len(key) < 2 || key[0] != "rule" {
		return 0, false
	}
	var raw struct {
		Rule []map[string]any `toml:"rule"`
	}
	if _, err := toml.Decode(string(data), &raw); err != nil {
		return 0, false
	}
	for i, r := range raw.Rule {
		if _, ok := r[key[1]]; ok {
			return i, true
		}
	}
	return 0, false
}

// ruleHeader is a [[rule]] table header line (the key bare or quoted).
var ruleHeader = regexp.MustCompile(`^[ \t]*\[\[[ \t]*(rule|"rule"|'rule')[ \t]*\]\][ \t]*(#.*)?\r?$`)

// ruleLines returns the 1-based line of each [[rule]] header of TOML src,
// in order, skipping lines inside multi-line strings.
func ruleLines(src string) []int {
	var lines []int
	var open string // closing delimiter of the multi-line string the line starts in
	for i, line := range strings.Split(src, "\n") {
		if open == "" && ruleHeader.MatchString(line) {
			lines = append(lines, i+1)
		}
		open = scanTOMLLine(line, open)
	}
	return lines
}

// scanTOMLLine scans one line of TOML that starts inside a multi-line
// string closed by open (or outside strings when open is "") and returns
// the delimiter of the multi-line string it ends in, or "".
func scanTOMLLine(line, open string) string {
	for j := 0; j < len(line); {
		c := line[j]
		switch {
		case open != "":
			k := closeAt(line[j:], open)
			if k < 0 {
				return open
			}
			j += k + len(open)
			for n := 0; n < 2 && j < len(line) && line[j] == open[0]; n++ {
				j++ // up to two quotes before the delimiter belong to the string
			}
			open = ""
		case c == '#':
			return ""
		case strings.HasPrefix(line[j:], `"""`) || strings.HasPrefix(line[j:], "'''"):
			open = line[j : j+3]
			j += 3
		case c == '"' || c == '\'':
			k := closeAt(line[j+1:], string(c))
			if k < 0 {
				return "" // unterminated: the TOML parser refuses it anyway
			}
			j += k + 2
		default:
			j++
		}
	}
	return open
}

// closeAt returns the index in s of the delimiter delim that closes a
// string, skipping backslash escapes in basic strings, or -1.
func closeAt(s, delim string) int {
	for i := 0; i+len(delim) <= len(s); i++ {
		if delim[0] == '"' && s[i] == '\\' {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], delim) {
			return i
		}
	}
	return -1
}

func checkRule(r Rule, names map[string]bool) error {
	if r.Name == "" {
		return errors.New("name is required")
	}
	if names[r.Name] {
		return errors.New("duplicate name")
	}
	names[r.Name] = true
	for _, m := range []struct {
		key  string
		vals strList
	}{{"command", r.Command}, {"kind", r.Kind}, {"path", r.Path}, {"title", r.Title}, {"agent", r.Agent}, {"class", r.Class}, {"mode", r.Mode}} {
		if m.vals != nil && len(m.vals) == 0 {
			return fmt.Errorf("%s = []: an empty array matches nothing; remove the key to match anything, or list at least one value", m.key)
		}
	}
	switch r.Decision {
	case DecisionAllow, DecisionAsk, DecisionDeny:
	default:
		return fmt.Errorf("decision %q: want allow, ask or deny", r.Decision)
	}
	if err := checkApprovers(r); err != nil {
		return err
	}
	for _, c := range []struct {
		key   string
		vals  strList
		valid map[string]bool
	}{{"kind", r.Kind, validKinds}, {"class", r.Class, validClasses}, {"mode", r.Mode, validModes}} {
		for _, v := range c.vals {
			if !c.valid[v] {
				return fmt.Errorf("%s %q is not known", c.key, v)
			}
		}
	}
	return nil
}

// Item is what a rule is matched against: one permission request as the
// broker sees it.
type Item struct {
	Kind    string // ACP tool kind ("other" when absent)
	Command string // the shell command, "" when none
	Title   string // the tool call title
	Class   string // read-only, write, unknown; "" when there is no command
	// Diverges: bash may read Command differently from the classifier
	// (Classification.Diverges).
	Diverges bool
	Mode     string   // gate mode of the session: plan or default
	Paths    []string // locations[].path and diff paths
	Agent    string   // Options.Agent
	// InputSHA256 is the hash of the tool call's rawInput, content and
	// locations: what a remembered verdict for a call without a command is
	// bound to.
	InputSHA256 string
}

// Verdict is the outcome of a policy evaluation: Decision is allow, ask or
// deny, or "" when no rule matched (which means ask); Rule names the rule
// that decided, empty when none matched.
type Verdict struct {
	Decision Decision
	Rule     string
	// Approval is who may answer, for an ask verdict: the constraints of
	// every matching ask rule together; nil when they say nothing beyond
	// "one answer of anyone who may answer".
	Approval *Approval
}

// Evaluate matches it against every rule: deny beats ask beats allow; among
// rules of the same decision the first in the file wins. No match gives a
// zero Verdict (ask). A nil Policy has no rules. Safe for concurrent use.
func (p *Policy) Evaluate(it Item) Verdict {
	if p == nil {
		return Verdict{}
	}
	rank := map[Decision]int{DecisionAllow: 1, DecisionAsk: 2, DecisionDeny: 3}
	var best Verdict
	var approval Approval
	for _, r := range p.Rules {
		if r.Decision == DecisionAllow && it.Class != "" && it.Class != "read-only" && !slices.Contains(r.Class, it.Class) {
			// An allow rule never approves a shell command classified
			// write or unknown (a glob such as "git status*" also matches
			// "git status; touch x") unless it names that class itself.
			continue
		}
		if !r.matches(it) {
			continue
		}
		if r.Decision == DecisionAsk {
			approval = approval.and(r)
		}
		if rank[r.Decision] > rank[best.Decision] {
			best = Verdict{Decision: r.Decision, Rule: r.Name}
		}
	}
	if best.Decision == DecisionAsk && approval.Restricted() {
		best.Approval = &approval
	}
	return best
}

func (r Rule) matches(it Item) bool {
	return anyEq(r.Kind, it.Kind) && anyGlob(r.Command, it.Command, false, it.Command != "") &&
		anyGlob(r.Title, it.Title, false, true) && anyEq(r.Class, it.Class) && anyEq(r.Mode, it.Mode) &&
		anyPath(r.Path, it.Paths) && anyEq(r.Agent, it.Agent)
}

// anyEq reports whether l is nil (no matcher) or holds v. A non-nil empty
// l (refused by Parse) matches nothing.
func anyEq(l strList, v string) bool {
	if l == nil {
		return true
	}
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

func anyGlob(l strList, v string, path, has bool) bool {
	if l == nil {
		return true
	}
	if !has {
		return false
	}
	v = strings.TrimSpace(v)
	for _, g := range l {
		if glob(g, v, path) {
			return true
		}
	}
	return false
}

func anyPath(l strList, paths []string) bool {
	if l == nil {
		return true
	}
	for _, p := range paths {
		if anyGlob(l, p, true, true) {
			return true
		}
	}
	return false
}

// glob matches s against pattern: "*" any run (not "/" when path is set),
// "**" any run including "/", "?" one character, everything else literally.
func glob(pattern, s string, path bool) bool {
	p, t := []rune(pattern), []rune(s)
	var match func(i, j int) bool
	memo := map[[2]int]bool{}
	match = func(i, j int) bool {
		k := [2]int{i, j}
		if v, ok := memo[k]; ok {
			return v
		}
		var ok bool
		switch {
		case i == len(p):
			ok = j == len(t)
		case p[i] == '*':
			star := i
			for i < len(p) && p[i] == '*' {
				i++
			}
			cross := !path || i-star >= 2
			for n := j; n <= len(t); n++ {
				if match(i, n) {
					ok = true
					break
				}
				if n < len(t) && !cross && t[n] == '/' {
					break
				}
			}
		case j < len(t) && (p[i] == '?' || p[i] == t[j]):
			ok = match(i+1, j+1)
		}
		memo[k] = ok
		return ok
	}
	return match(0, 0)
}

// MaxNesting is how deep arrays and inline tables may nest in a policy
// file; deeper is malformed (a policy needs two or three levels).
const MaxNesting = 16

// nesting returns the deepest nesting of [ and { outside strings and
// comments in a TOML document (table headers count one level) and the
// line where it first exceeds MaxNesting (or the deepest line). It does
// not validate.
func nesting(data []byte) (depth, line int) {
	cur, ln, quote, atLine := 0, 1, byte(0), 1
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '\n':
			ln++
			if quote == '#' {
				quote = 0
			}
		case quote == '#':
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			quote = '#'
		case c == '[' || c == '{':
			if cur++; cur > depth {
				depth, atLine = cur, ln
				if depth > MaxNesting {
					return depth, atLine
				}
			}
		case c == ']' || c == '}':
			cur--
		}
	}
	return depth, atLine
}
