package classify

import (
	"strings"
)

// denyRule is an option that makes a read-only program write or run
// code: short letters match anywhere in a cluster (even inside a value,
// which errs towards the rule), long names match any abbreviation.
type denyRule struct {
	short string
	long  []string
	class Class
	why   string
}

// deny checks every argument before "--" against rules, for programs
// whose other options are harmless. A word decided at run time that may
// be an option is Unknown; when optionsOnly is false the words after "--"
// are operands and harmless too.
func (c *classifier) deny(x *cmd, rules ...denyRule) []arg {
	var ops []arg
	for a := range c.optionWords(x.args, &ops) {
		for _, r := range rules {
			if r.matches(a.text) {
				c.argAt(r.class, a, r.why)
				break
			}
		}
	}
	return ops
}

func (r denyRule) matches(s string) bool {
	if name, ok := strings.CutPrefix(s, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		for _, l := range r.long {
			if name != "" && strings.HasPrefix(l, name) {
				return true
			}
		}
		return false
	}
	return strings.ContainsAny(s[1:], r.short) && r.short != ""
}

func denyHandler(why string, rules ...denyRule) handler {
	return func(c *classifier, x *cmd) {
		mark := c.mark()
		c.deny(x, rules...)
		c.finishArg(mark, x.at, x.name+" "+why)
	}
}

var (
	rgCmd = denyHandler("searches files",
		denyRule{short: "z", long: []string{"pre", "hostname-bin", "search-zip"}, class: Unknown,
			why: "rg --pre, --hostname-bin and -z run programs"})
	fdCmd = denyHandler("lists files",
		denyRule{short: "xX", long: []string{"exec", "exec-batch"}, class: Unknown, why: "fd -x and -X run a command per file"})
	treeCmd = denyHandler("lists files",
		denyRule{short: "oR", long: []string{"output"}, class: Write, why: "tree -o writes a file; -R writes 00Tree.html files"})
	base64Cmd = denyHandler("encodes or decodes",
		denyRule{short: "o", long: []string{"output"}, class: Write, why: "base64 -o writes a file"})
	yqCmd = denyHandler("reads YAML",
		denyRule{short: "is", long: []string{"inplace", "split-exp"}, class: Write, why: "yq -i edits files in place; -s writes files"},
		denyRule{long: []string{"from-file"}, class: Unknown, why: "yq --from-file reads its expression from a file"})
	lsofCmd = func(c *classifier, x *cmd) {
		for _, a := range x.args {
			if a.static && strings.HasPrefix(a.text, "+m") {
				c.argAt(Write, a, "lsof +m writes a mount supplement file")
				return
			}
		}
		denyHandler("lists open files")(c, x)
	}
)

// xxdCmd: xxd writes its output to a second operand.
func xxdCmd(c *classifier, x *cmd) {
	mark := c.mark()
	var ops []arg
	for i := 0; i < len(x.args); i++ {
		a := x.args[i]
		switch {
		case a.mayBeOption():
			c.argAt(Unknown, a, "argument decided at run time may be an option")
		case !a.static || len(a.text) < 2 || a.text[0] != '-':
			ops = append(ops, a)
		default:
			l := strings.TrimLeft(a.text, "-")
			if l != "" && strings.IndexByte("cglnosR", l[0]) >= 0 && (len(l) == 1 || len(l) > 2 && isAwkIdent(l[1])) {
				i++ // -c 8, -cols 8
			}
		}
	}
	n, multi := countOps(ops)
	switch {
	case n >= 2 && !ops[1].is("-"):
		c.argAt(Write, ops[1], "xxd writes its output to the second operand")
	case multi:
		c.argAt(Unknown, x.span(), "operands decided at run time may name an output file")
	}
	c.finishArg(mark, x.at, "xxd dumps files")
}

// jqCmd: jq cannot write, but reading its filter from a file or a
// library path is not proven read-only by the anchors.
func jqCmd(c *classifier, x *cmd) {
	mark := c.mark()
	two := map[string]bool{"--arg": true, "--argjson": true, "--slurpfile": true, "--rawfile": true}
	one := map[string]bool{"--indent": true, "-L": true, "--library-path": true, "-f": true, "--from-file": true}
	filter := true
	for i := 0; i < len(x.args); i++ {
		a := x.args[i]
		switch {
		case a.mayBeOption():
			c.argAt(Unknown, a, "argument decided at run time may be an option")
		case !a.static || len(a.text) < 2 || a.text[0] != '-':
			if filter && a.static && strings.Contains(a.text, "system") {
				c.argAt(Unknown, a, "jq filter mentions system")
			}
			filter = false
		case a.text == "--args" || a.text == "--jsonargs":
			i = len(x.args)
		case a.text == "-f" || a.text == "--from-file" || a.text == "-L" || a.text == "--library-path" ||
			a.text == "--slurpfile" || a.text == "--rawfile" || strings.HasPrefix(a.text, "-L"):
			c.argAt(Unknown, a, "jq "+a.text+" loads filters or data from files the anchors do not prove harmless")
			i = len(x.args)
		case two[a.text]:
			i += 2
		case one[a.text]:
			i++
		case strings.HasPrefix(a.text, "--"):
			switch a.text {
			case "--null-input", "--raw-input", "--slurp", "--compact-output", "--tab", "--color-output",
				"--monochrome-output", "--ascii-output", "--unbuffered", "--sort-keys", "--raw-output",
				"--raw-output0", "--join-output", "--exit-status", "--seq", "--stream", "--stream-errors",
				"--help", "--version", "--build-configuration":
			default:
				c.argAt(Unknown, a, "jq option "+a.text+" is not known")
			}
		default:
			if strings.Trim(a.text[1:], "nrjasCMSecRh0V") != "" {
				c.argAt(Unknown, a, "jq option "+a.text+" is not known")
			}
		}
	}
	c.finishArg(mark, x.at, "jq prints JSON")
}

// tarSafeLong are the GNU tar long options, spelt out in full, that
// neither run a program nor write a file when listing.
var tarSafeLong = map[string]bool{
	"file": true, "verbose": true, "gzip": true, "gunzip": true, "ungzip": true, "bzip2": true, "xz": true,
	"zstd": true, "lzma": true, "lzip": true, "lzop": true, "auto-compress": true, "wildcards": true,
	"no-wildcards": true, "anchored": true, "no-anchored": true, "exclude": true, "numeric-owner": true,
	"utc": true, "full-time": true, "null": true, "ignore-zeros": true, "totals": true, "quiet": true,
	"show-stored-names": true, "occurrence": true, "ignore-case": true, "no-ignore-case": true,
	"wildcards-match-slash": true, "no-wildcards-match-slash": true, "verbatim-files-from": true,
	"blocking-factor": true, "record-size": true, "directory": true, "strip-components": true,
}

// tarCmd: listing (-t) is read-only; every other mode writes. Options
// that run programs are Unknown.
func tarCmd(c *classifier, x *cmd) {
	mark := c.mark()
	mode := byte(0)
	for i, a := range x.args {
		if a.mayBeOption() {
			c.argAt(Unknown, a, "argument decided at run time may be an option")
			continue
		}
		if !a.static {
			continue
		}
		s := a.text
		if s == "--" {
			break
		}
		if strings.Contains(s, ":") && !strings.HasPrefix(s, "--") {
			c.argAt(Unknown, a, "tar treats an archive name with a colon as a remote file, reached through rsh or ssh")
		}
		switch {
		case strings.HasPrefix(s, "--"):
			name, value, _ := strings.Cut(s[2:], "=")
			switch {
			case name == "list":
				mode = 't'
			case strings.HasPrefix("extract", name) && len(name) > 1, name == "get", strings.HasPrefix("create", name) && len(name) > 1,
				name == "append", name == "update", name == "catenate", name == "concatenate", name == "delete":
				mode = 'x'
			case name == "file" && strings.Contains(value, ":"):
				c.argAt(Unknown, a, "tar treats an archive name with a colon as a remote file, reached through rsh or ssh")
			case !tarSafeLong[name]:
				// GNU tar accepts any unambiguous abbreviation, and many
				// long options run programs or write files (--use=,
				// --checkpoint-a=exec=, --index=, --volno-file=, --rsh=):
				// only the listed names, spelt out, are known harmless.
				c.argAt(Unknown, a, "tar --"+name+" is not known to be harmless (long options may be abbreviated; many run programs or write files)")
			}
		case strings.HasPrefix(s, "-") || i == 0:
			letters := strings.TrimPrefix(s, "-")
			if strings.ContainsAny(letters, "IFg") {
				c.argAt(Unknown, a, "tar -I, -F and -g run programs or write files")
			}
			for _, l := range []byte(letters) {
				switch l {
				case 't':
					if mode == 0 {
						mode = 't'
					}
				case 'x', 'c', 'r', 'u', 'A':
					mode = 'x'
				}
			}
		}
	}
	switch mode {
	case 't':
		c.finishArg(mark, x.at, "tar -t lists an archive")
	case 'x':
		c.argAt(Write, x.at, "tar extracts or writes an archive")
	default:
		c.argAt(Unknown, x.span(), "tar mode not recognised")
	}
}

func unzipCmd(c *classifier, x *cmd) {
	for _, a := range x.args {
		if a.static && strings.HasPrefix(a.text, "-") && strings.ContainsAny(a.text[1:], "lvtpcZz") {
			c.argAt(ReadOnly, x.at, "unzip lists, tests or prints an archive")
			return
		}
	}
	c.argAt(Write, x.at, "unzip extracts files")
}

func sevenZipCmd(c *classifier, x *cmd) {
	if len(x.args) > 0 && (x.args[0].is("l") || x.args[0].is("t") || x.args[0].is("i") || x.args[0].is("h")) {
		for _, a := range x.args[1:] {
			if a.static && (strings.HasPrefix(a.text, "-o") || strings.HasPrefix(a.text, "-so")) {
				c.argAt(Unknown, a, "7z output option")
				return
			}
		}
		c.argAt(ReadOnly, x.at, "7z lists or tests an archive")
		return
	}
	c.argAt(Write, x.at, "7z extracts, adds or deletes")
}

// compressReadLetters are the short options with which each compressor
// only writes to stdout (-c), lists (-l) or tests (-t). lz4 -l means the
// legacy format, not list.
var compressReadLetters = map[string]string{
	"gzip": "clt", "gunzip": "clt", "xz": "clt", "unxz": "clt", "lzma": "clt", "unlzma": "clt",
	"zstd": "clt", "unzstd": "clt", "bzip2": "ct", "bunzip2": "ct", "lz4": "ct", "brotli": "ct",
	"compress": "c", "uncompress": "c",
}

// compressCmd: gzip and friends replace files unless they write to stdout
// (-c), list (-l) or test (-t).
func compressCmd(c *classifier, x *cmd) {
	mark := c.mark()
	stdout := false
	for _, a := range x.args {
		switch {
		case a.mayBeOption():
			c.argAt(Unknown, a, "argument decided at run time may be an option")
		case !a.static || len(a.text) < 2 || a.text[0] != '-':
		case a.text == "--":
		case strings.HasPrefix(a.text, "--"):
			name, _, _ := strings.Cut(a.text[2:], "=")
			switch {
			case name == "stdout" || name == "to-stdout" || name == "list" || name == "test":
				stdout = true
			case name == "rm" || strings.HasPrefix(name, "output") || strings.HasPrefix(name, "output-dir"):
				c.argAt(Write, a, x.name+" --"+name+" writes or removes files")
			}
		default:
			if strings.ContainsRune(a.text[1:], 'o') && (x.name == "zstd" || x.name == "unzstd" || x.name == "brotli") {
				c.argAt(Write, a, x.name+" -o writes a file")
			}
			if strings.ContainsAny(a.text[1:], compressReadLetters[x.name]) {
				stdout = true
			}
		}
	}
	if !stdout && !c.raised(mark) {
		c.argAt(Write, x.at, x.name+" replaces files with their (de)compressed form")
	}
	c.finishArg(mark, x.at, x.name+" writes to stdout, lists or tests")
}

// curlCmd: a network client is never read-only; it writes with -o and
// friends.
func curlCmd(c *classifier, x *cmd) {
	writes := denyRule{short: "oODcT", long: []string{"output", "remote-name", "remote-name-all", "dump-header",
		"cookie-jar", "output-dir", "create-dirs", "etag-save", "trace", "trace-ascii", "libcurl", "stderr",
		"upload-file", "hsts", "alt-svc"}, class: Write, why: "curl writes a local file or uploads one"}
	for i, a := range x.args {
		if !a.static || !writes.matches(a.text) || len(a.text) < 2 || a.text[0] != '-' {
			continue
		}
		// -o - and -D - write to stdout.
		if (a.is("-o") || a.is("-D") || a.is("--output") || a.is("--dump-header")) && i+1 < len(x.args) && x.args[i+1].is("-") {
			continue
		}
		if a.is("-o-") || a.is("--output=-") {
			continue
		}
		c.argAt(Write, a, writes.why)
		return
	}
	c.argAt(Unknown, x.at, "curl talks to the network")
}

// wgetCmd: wget saves what it downloads unless told to write to stdout.
func wgetCmd(c *classifier, x *cmd) {
	for i, a := range x.args {
		if !a.static {
			continue
		}
		s := a.text
		toStdout := s == "-O-" || s == "--output-document=-" || strings.HasSuffix(s, "O-") && !strings.HasPrefix(s, "--") ||
			((s == "-O" || s == "--output-document") && i+1 < len(x.args) && x.args[i+1].is("-")) || s == "--spider"
		if toStdout {
			c.argAt(Unknown, x.at, "wget talks to the network")
			return
		}
	}
	c.argAt(Write, x.at, "wget saves what it downloads")
}

func ddCmd(c *classifier, x *cmd) {
	for _, a := range x.args {
		if !a.static || strings.HasPrefix(a.text, "of=") {
			c.argAt(Write, a, "dd of= writes a file")
			return
		}
	}
	c.argAt(Unknown, x.at, "dd reads devices or files in ways the classifier does not bound")
}

func perlCmd(c *classifier, x *cmd) {
	for _, a := range x.args {
		if !a.static || !strings.HasPrefix(a.text, "-") || strings.HasPrefix(a.text, "--") {
			break
		}
		if strings.ContainsRune(a.text[1:], 'i') {
			c.argAt(Write, a, "perl -i edits files in place")
			return
		}
		if strings.ContainsAny(a.text[1:], "eE") {
			break
		}
	}
	c.argAt(Unknown, x.at, "perl runs code")
}

// firstWord returns the first operand: the subcommand of tools such as
// ip, systemctl, docker, and whether it is static.
func firstWord(args []arg, valued map[string]bool) (int, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return i, false
		}
		if !strings.HasPrefix(a.text, "-") {
			return i, true
		}
		if valued[a.text] {
			i++
		}
	}
	return len(args), true
}

func ipCmd(c *classifier, x *cmd) {
	i, ok := firstWord(x.args, map[string]bool{"-n": true, "-netns": true, "-f": true, "-family": true, "-l": true, "-loops": true, "-rc": true, "-rcvbuf": true})
	for _, a := range x.args[:i] {
		if a.is("-b") || a.is("-batch") || a.is("-force") {
			c.argAt(Unknown, a, "ip -batch runs commands from a file")
			return
		}
	}
	if !ok || i == len(x.args) {
		c.argAt(Unknown, x.span(), "ip without a static object")
		return
	}
	if i+1 >= len(x.args) {
		c.argAt(ReadOnly, x.at, "ip OBJECT lists network state")
		return
	}
	switch v := x.args[i+1]; {
	case !v.static:
		c.argAt(Unknown, v, "ip command decided at run time")
	case v.text == "show" || v.text == "list" || v.text == "ls" || v.text == "lst" || v.text == "get" || v.text == "help" ||
		strings.HasPrefix(v.text, "-") || x.args[i].is("route") && v.text == "get":
		c.argAt(ReadOnly, x.at, "ip lists network state")
	default:
		c.argAt(Write, v, "ip "+x.args[i].text+" "+v.text+" changes network state")
	}
}

// subcommands gives the class of a tool's subcommands.
type subcommands struct {
	reads   []string // read-only
	writes  []string // write
	valued  map[string]bool
	why     string // what the tool does, for unknown subcommands
	noVerb  Class  // the class without a subcommand
	globals bool   // options before the subcommand are harmless
}

func (s *subcommands) handle(c *classifier, x *cmd) {
	i, ok := firstWord(x.args, s.valued)
	if !s.globals && i > 0 && ok {
		c.argAt(Unknown, x.args[0], x.name+" option before the subcommand")
		return
	}
	if !ok {
		c.argAt(Unknown, x.args[i], x.name+" subcommand decided at run time")
		return
	}
	if i == len(x.args) {
		c.argAt(s.noVerb, x.at, x.name+" "+s.why)
		return
	}
	v := x.args[i]
	for _, r := range s.writes {
		if v.text == r {
			c.argAt(Write, v, x.name+" "+v.text+" changes state")
			return
		}
	}
	for _, r := range s.reads {
		if v.text == r {
			c.argAt(ReadOnly, x.span(), x.name+" "+v.text+" only reads")
			return
		}
	}
	c.argAt(Unknown, v, x.name+" "+v.text+": "+s.why)
}

var systemctlSubs = &subcommands{
	reads: []string{"status", "show", "cat", "list-units", "list-unit-files", "list-timers", "list-sockets",
		"list-dependencies", "list-jobs", "list-machines", "is-active", "is-enabled", "is-failed",
		"is-system-running", "get-default", "help"},
	writes: []string{"start", "stop", "restart", "reload", "try-restart", "reload-or-restart", "enable", "disable",
		"reenable", "mask", "unmask", "kill", "daemon-reload", "daemon-reexec", "set-default", "isolate", "reboot",
		"poweroff", "halt", "suspend", "hibernate", "reset-failed", "set-property", "edit", "link", "preset",
		"revert", "set-environment", "unset-environment", "import-environment", "freeze", "thaw", "clean"},
	why: "controls services", noVerb: ReadOnly, globals: true,
}

func systemctlCmd(c *classifier, x *cmd) {
	for _, a := range x.args {
		if a.static && (strings.HasPrefix(a.text, "-H") || strings.HasPrefix(a.text, "--host") ||
			strings.HasPrefix(a.text, "-M") || strings.HasPrefix(a.text, "--machine")) {
			c.argAt(Unknown, a, "systemctl -H and -M operate on another host or container")
			return
		}
	}
	systemctlSubs.handle(c, x)
}

var dockerSubs = &subcommands{
	reads:  []string{"ps", "images", "logs", "inspect", "version", "info", "top", "port", "diff", "history", "stats"},
	writes: []string{"run", "build", "pull", "push", "rm", "rmi", "stop", "start", "restart", "kill", "create", "tag", "commit", "cp", "rename", "pause", "unpause", "update", "prune", "load", "save", "import", "login", "logout", "network", "volume", "system", "image", "container", "buildx", "swarm", "service", "stack", "secret", "config", "node", "plugin", "context", "trust"},
	why:    "runs containers or reaches a registry", noVerb: Unknown,
}

func dockerCmd(c *classifier, x *cmd) {
	if len(x.args) > 0 && x.args[0].is("compose") {
		composeSubs.handle(c, &cmd{name: x.name + " compose", at: x.at, args: x.args[1:]})
		return
	}
	if len(x.args) > 0 && x.args[0].is("exec") {
		c.argAt(Unknown, x.args[0], x.name+" exec runs a command in a container")
		return
	}
	dockerSubs.handle(c, x)
}

var composeSubs = &subcommands{
	reads:  []string{"ps", "logs", "config", "ls", "images", "top", "version", "port"},
	writes: []string{"up", "down", "start", "stop", "restart", "rm", "pull", "push", "build", "create", "kill", "pause", "unpause", "cp", "rm", "scale", "watch"},
	why:    "runs containers", noVerb: Unknown,
	valued: map[string]bool{"-f": true, "--file": true, "-p": true, "--project-name": true, "--profile": true, "--env-file": true, "--project-directory": true},
}

var kubectlSubs = &subcommands{
	writes: []string{"apply", "create", "delete", "edit", "patch", "replace", "scale", "autoscale", "rollout", "set",
		"label", "annotate", "expose", "run", "cordon", "uncordon", "drain", "taint", "cp", "install", "uninstall",
		"upgrade", "rollback", "push", "repo"},
	why: "talks to a cluster", noVerb: Unknown,
}

var kubectlCmd = kubectlSubs.handle

func ghCmd(c *classifier, x *cmd) {
	if len(x.args) >= 2 && x.args[0].static && x.args[1].static {
		group, verb := x.args[0].text, x.args[1].text
		if ghWrites[group+" "+verb] || ghWrites[group+" *"] {
			c.argAt(Write, x.args[1], "gh "+group+" "+verb+" changes GitHub or local state")
			return
		}
	}
	c.argAt(Unknown, x.at, "gh talks to GitHub")
}

var ghWrites = map[string]bool{
	"pr create": true, "pr merge": true, "pr close": true, "pr comment": true, "pr edit": true, "pr review": true,
	"pr ready": true, "pr reopen": true, "pr checkout": true, "pr lock": true, "pr unlock": true,
	"issue create": true, "issue close": true, "issue comment": true, "issue edit": true, "issue delete": true,
	"issue reopen": true, "issue transfer": true, "issue lock": true, "issue pin": true, "issue develop": true,
	"repo create": true, "repo delete": true, "repo fork": true, "repo clone": true, "repo rename": true,
	"repo archive": true, "repo edit": true, "repo sync": true, "release create": true, "release delete": true,
	"release upload": true, "release edit": true, "release download": true, "workflow run": true,
	"workflow enable": true, "workflow disable": true, "run cancel": true, "run rerun": true, "run delete": true,
	"run download": true, "secret set": true, "secret delete": true, "variable set": true, "variable delete": true,
	"label create": true, "label edit": true, "label delete": true, "gist create": true, "gist edit": true,
	"gist delete": true, "auth login": true, "auth logout": true, "auth refresh": true, "auth setup-git": true,
	"extension install": true, "extension remove": true, "extension upgrade": true, "config set": true,
	"cache delete": true, "codespace *": true,
}

// pkgWrites lists, per package manager or build tool, the subcommands
// that install, remove, publish or rewrite files. Other subcommands run
// project code or reach the network: Unknown.
var pkgWrites = map[string][]string{
	"npm":       {"install", "i", "add", "ci", "uninstall", "remove", "rm", "un", "r", "unlink", "update", "up", "upgrade", "link", "ln", "publish", "unpublish", "deprecate", "dedupe", "prune", "init", "create", "version", "pack", "shrinkwrap"},
	"yarn":      {"add", "remove", "install", "upgrade", "up", "link", "unlink", "init", "publish", "set", "dedupe"},
	"pnpm":      {"add", "install", "i", "remove", "rm", "update", "up", "link", "unlink", "publish", "init", "import", "prune", "dedupe"},
	"pip":       {"install", "uninstall", "download", "wheel"},
	"pip3":      {"install", "uninstall", "download", "wheel"},
	"uv":        {"add", "remove", "sync", "lock", "init", "venv", "build", "publish"},
	"poetry":    {"add", "remove", "install", "update", "lock", "init", "new", "publish", "build"},
	"cargo":     {"add", "remove", "rm", "install", "uninstall", "new", "init", "publish", "update", "fix", "fmt", "clean", "generate-lockfile", "vendor", "package", "build", "b"},
	"go":        {"install", "get", "fmt", "fix", "clean", "generate", "mod", "work"},
	"gem":       {"install", "uninstall", "update", "build", "push", "cleanup"},
	"bundle":    {"install", "update", "add", "remove", "lock", "package", "clean"},
	"composer":  {"require", "install", "update", "remove", "create-project", "dump-autoload"},
	"brew":      {"install", "uninstall", "remove", "rm", "upgrade", "update", "tap", "untap", "link", "unlink", "cleanup", "reinstall", "services", "pin", "unpin"},
	"apt":       {"install", "remove", "purge", "upgrade", "update", "autoremove", "full-upgrade", "dist-upgrade", "reinstall"},
	"apt-get":   {"install", "remove", "purge", "upgrade", "update", "autoremove", "dist-upgrade", "clean", "autoclean", "build-dep", "source", "download"},
	"dnf":       {"install", "remove", "erase", "upgrade", "update", "downgrade", "reinstall", "autoremove", "makecache", "clean"},
	"yum":       {"install", "remove", "erase", "upgrade", "update", "downgrade", "reinstall", "autoremove", "makecache", "clean"},
	"pacman":    {"-S", "-R", "-U", "-Syu", "-Sy", "-Su", "-Rs", "-Rns"},
	"apk":       {"add", "del", "upgrade", "update", "fix", "cache"},
	"zypper":    {"install", "in", "remove", "rm", "update", "up", "dist-upgrade", "dup", "refresh", "ref"},
	"port":      {"install", "uninstall", "upgrade", "selfupdate", "sync", "clean"},
	"conda":     {"install", "create", "remove", "uninstall", "update", "upgrade", "clean", "env", "init", "config"},
	"mamba":     {"install", "create", "remove", "uninstall", "update", "upgrade", "clean", "env"},
	"terraform": {"apply", "destroy", "import", "init", "taint", "untaint", "fmt", "state", "workspace", "refresh", "force-unlock", "get"},
	"rustup":    {"install", "uninstall", "update", "default", "toolchain", "target", "component", "override", "self", "set"},
	"nix":       {"build", "profile", "store", "registry", "copy"},
	"dpkg":      {"-i", "--install", "-r", "--remove", "-P", "--purge", "--configure", "--unpack"},
	"rpm":       {"-i", "--install", "-U", "--upgrade", "-e", "--erase", "-F", "--freshen"},
}

// pkgCmd classifies package managers and build tools.
func pkgCmd(c *classifier, x *cmd) {
	args := x.args
	if x.name == "go" || x.name == "cargo" {
		if w, ok := buildOutput(args); ok {
			c.argAt(Write, w, x.name+" "+w.text+" writes the built program")
			return
		}
	}
	if x.name == "go" && len(args) >= 1 && args[0].is("mod") {
		if len(args) >= 2 && (args[1].is("graph") || args[1].is("why") || args[1].is("verify") || args[1].is("help")) {
			c.argAt(Unknown, args[1], "go mod "+args[1].text+" may download modules")
			return
		}
	}
	if x.name == "go" && len(args) >= 2 && args[0].is("env") {
		for _, a := range args[1:] {
			if a.is("-w") || a.is("-u") {
				c.argAt(Write, a, "go env -w changes the Go environment file")
				return
			}
		}
	}
	verb := -1
	for i, a := range args {
		if !a.static {
			break
		}
		if (x.name == "pacman" || x.name == "dpkg" || x.name == "rpm") && strings.HasPrefix(a.text, "-") {
			for _, w := range pkgWrites[x.name] {
				if a.text == w || (x.name == "pacman" && len(a.text) > 1 && strings.ContainsAny(a.text[1:2], "SRU") && !strings.ContainsAny(a.text, "sQiplg")) {
					c.argAt(Write, a, x.name+" "+a.text+" installs or removes packages")
					return
				}
			}
			continue
		}
		if !strings.HasPrefix(a.text, "-") {
			verb = i
			break
		}
	}
	if verb < 0 {
		if x.name == "yarn" || x.name == "bundle" || x.name == "composer" && len(args) == 0 {
			c.argAt(Write, x.at, x.name+" with no subcommand installs dependencies")
			return
		}
		c.argAt(Unknown, x.at, x.name+" runs project code or reaches the network")
		return
	}
	v := args[verb]
	for _, w := range pkgWrites[x.name] {
		if v.text == w {
			if dryRun(args[verb+1:]) {
				c.argAt(Unknown, v, x.name+" "+v.text+" with a dry-run flag")
				return
			}
			c.argAt(Write, v, x.name+" "+v.text+" installs, removes or rewrites files")
			return
		}
	}
	if x.name == "pip" || x.name == "pip3" || x.name == "uv" {
		if v.is("pip") && verb+1 < len(args) && (args[verb+1].is("install") || args[verb+1].is("uninstall") || args[verb+1].is("sync")) {
			c.argAt(Write, args[verb+1], x.name+" pip "+args[verb+1].text+" installs or removes packages")
			return
		}
	}
	c.argAt(Unknown, v, x.name+" "+v.text+" runs project code or reaches the network")
}

func dryRun(args []arg) bool {
	for _, a := range args {
		if a.is("--dry-run") || a.is("-n") && false {
			return true
		}
	}
	return false
}

// buildOutput finds -o FILE (go build, go test -c) or --out-dir.
func buildOutput(args []arg) (arg, bool) {
	if len(args) == 0 || !(args[0].is("build") || args[0].is("test") || args[0].is("b")) {
		return arg{}, false
	}
	for _, a := range args[1:] {
		if a.static && (a.text == "-o" || strings.HasPrefix(a.text, "-o=") || a.text == "--out-dir" ||
			strings.HasPrefix(a.text, "--out-dir=") || a.text == "--artifact-dir") {
			return a, true
		}
	}
	return arg{}, false
}

func gofmtCmd(c *classifier, x *cmd) {
	for _, a := range x.args {
		if a.static && strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") && strings.ContainsRune(a.text, 'w') {
			c.argAt(Write, a, "gofmt -w rewrites files")
			return
		}
	}
	c.argAt(Unknown, x.at, "gofmt writes Go telemetry counters")
}

// tputCmd: tput prints terminal capabilities; init and reset may run the
// terminal's init program, and -S reads commands from stdin.
func tputCmd(c *classifier, x *cmd) {
	for _, a := range x.args {
		if !a.static || a.text == "init" || a.text == "reset" || strings.HasPrefix(a.text, "-S") {
			c.argAt(Unknown, a, "tput init, reset and -S may run programs or read commands")
			return
		}
	}
	c.argAt(ReadOnly, x.at, "tput prints terminal capabilities")
}

// sttyCmd: stty only prints with no settings.
func sttyCmd(c *classifier, x *cmd) {
	for _, a := range x.args {
		switch {
		case a.is("-a") || a.is("--all") || a.is("-g") || a.is("--save") || a.is("size") || a.is("speed"):
		default:
			c.argAt(Unknown, a, "stty changes terminal settings")
			return
		}
	}
	c.argAt(ReadOnly, x.at, "stty prints terminal settings")
}

// mountCmd: mount with no arguments (or -l) lists mounts.
func mountCmd(c *classifier, x *cmd) {
	if len(x.args) == 0 || (len(x.args) == 1 && x.args[0].is("-l")) {
		c.argAt(ReadOnly, x.at, "mount with no arguments lists mounts")
		return
	}
	c.argAt(Write, x.at, "mount mounts a file system")
}

// defaultsCmd: macOS defaults read is read-only; write, delete, rename
// and import change preferences.
var defaultsCmd = (&subcommands{
	reads:  []string{"read", "read-type", "domains", "find", "help"},
	writes: []string{"write", "delete", "rename", "import"},
	why:    "reads or changes preferences", noVerb: Unknown, globals: true,
	valued: map[string]bool{"-host": true},
}).handle

// sshOptsWithValue are the ssh options that take a value.
const sshOptsWithValue = "BbcDEeFIiJLlmOopQRSWw"

// sshCmd: ssh runs its command words on another host with the remote
// user's shell; they are classified as a script, at least unknown.
func sshCmd(c *classifier, x *cmd) {
	c.argAt(Unknown, x.at, "ssh runs commands on another host")
	i := 0
	for ; i < len(x.args); i++ {
		a := x.args[i]
		if !a.static || !strings.HasPrefix(a.text, "-") || a.text == "-" {
			break
		}
		if a.text == "--" {
			i++
			break
		}
		for j := 1; j < len(a.text); j++ {
			if strings.IndexByte(sshOptsWithValue, a.text[j]) >= 0 {
				if j == len(a.text)-1 {
					i++
				}
				break
			}
		}
	}
	if i+1 < len(x.args) {
		c.joined(x.args[i+1:], "ssh runs this command on the remote host")
	}
}

// crontabCmd: crontab -l lists; every other form installs or removes a
// table.
func crontabCmd(c *classifier, x *cmd) {
	for _, a := range x.args {
		if a.is("-l") {
			c.argAt(ReadOnly, x.at, "crontab -l lists the table")
			return
		}
	}
	c.argAt(Write, x.at, "crontab installs, edits or removes a cron table")
}

// serviceCmd: service NAME ACTION runs an init script.
func serviceCmd(c *classifier, x *cmd) {
	if len(x.args) >= 2 && x.args[1].static {
		switch x.args[1].text {
		case "start", "stop", "restart", "reload", "force-reload", "try-restart", "condrestart", "enable", "disable":
			c.argAt(Write, x.args[1], "service "+x.args[1].text+" changes a running service")
			return
		}
	}
	c.argAt(Unknown, x.at, "service runs an init script")
}
