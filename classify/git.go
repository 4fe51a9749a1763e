package classify

import (
	"strings"
)

// Git is read-only only for the read subcommands below, run in the
// current repository, without options that write (--output), run
// programs (--ext-diff, --textconv, pagers, gpg) or point git at another
// repository's configuration (-C, --git-dir, a cd earlier in the input).

// gitWrites are subcommands that change the work tree, the index, refs,
// objects, configuration or a remote.
var gitWrites = map[string]string{
	"add": "stages changes", "stage": "stages changes", "am": "applies patches", "checkout": "changes the work tree",
	"cherry-pick": "commits", "clean": "removes files", "clone": "writes a repository", "commit": "commits",
	"commit-graph": "writes the commit graph", "commit-tree": "writes an object", "fast-import": "writes objects",
	"fetch": "updates refs from a remote", "filter-branch": "rewrites history", "filter-repo": "rewrites history",
	"gc": "repacks and prunes", "index-pack": "writes a pack index", "init": "creates a repository",
	"mailinfo": "writes files", "mailsplit": "writes files", "maintenance": "changes the repository",
	"merge": "merges", "merge-file": "writes a file", "mktag": "writes an object", "mktree": "writes an object",
	"multi-pack-index": "writes an index", "mv": "moves files", "pack-objects": "writes packs",
	"pack-refs": "packs refs", "prune": "removes objects", "prune-packed": "removes objects", "pull": "fetches and merges",
	"push": "updates a remote", "read-tree": "changes the index", "rebase": "rewrites history", "repack": "repacks",
	"replace": "writes replace refs", "rerere": "records resolutions", "reset": "moves HEAD or the index",
	"restore": "changes files", "revert": "commits", "rm": "removes files", "send-email": "sends mail",
	"sparse-checkout": "changes the work tree", "switch": "changes the work tree", "unpack-objects": "writes objects",
	"update-index": "changes the index", "update-ref": "changes refs", "update-server-info": "writes files",
	"write-tree": "writes an object", "checkout-index": "writes files", "merge-index": "merges files",
	"replay": "writes commits", "bugreport": "writes a report file", "diagnose": "writes an archive",
	"merge-tree": "writes objects",
}

// gitOpaque are subcommands that run other programs, wait for a human or
// reach the network.
var gitOpaque = map[string]string{
	"difftool": "runs a diff tool", "mergetool": "runs a merge tool", "gui": "opens a GUI", "citool": "opens a GUI",
	"gitk": "opens a GUI", "instaweb": "starts a web server", "help": "opens a pager or browser",
	"web--browse": "opens a browser", "daemon": "starts a server", "credential": "runs credential helpers",
	"credential-cache": "runs a credential helper", "credential-store": "runs a credential helper",
	"ls-remote": "contacts a remote", "request-pull": "contacts a remote", "fsck": "checks objects and may write lost-found",
	"verify-commit": "runs gpg", "verify-tag": "runs gpg", "svn": "talks to Subversion", "p4": "talks to Perforce",
	"archimport": "imports", "cvsimport": "imports", "shell": "runs a restricted shell", "upload-pack": "serves a fetch",
	"receive-pack": "receives a push", "upload-archive": "serves an archive", "fetch-pack": "contacts a remote",
	"send-pack": "contacts a remote", "http-backend": "serves HTTP", "scalar": "manages repositories",
}

// gitReads are subcommands that only read the repository, given the
// option checks of gitDeny.
var gitReads = map[string]bool{
	"status": true, "log": true, "show": true, "diff": true, "whatchanged": true, "shortlog": true,
	"diff-tree": true, "diff-files": true, "diff-index": true, "rev-list": true, "blame": true, "annotate": true,
	"range-diff": true, "cherry": true, "grep": true, "ls-files": true, "ls-tree": true, "cat-file": true,
	"rev-parse": true, "describe": true, "show-ref": true, "for-each-ref": true, "merge-base": true,
	"name-rev": true, "count-objects": true, "show-branch": true, "var": true, "check-ignore": true,
	"check-attr": true, "check-ref-format": true, "check-mailmap": true, "verify-pack": true, "patch-id": true,
	"column": true, "stripspace": true, "get-tar-commit-id": true, "version": true, "show-index": true,
}

// gitDenyLong are long options of read subcommands that write or run
// programs. Any abbreviation of them counts.
var gitDenyLong = []struct {
	name  string
	class Class
	why   string
}{
	{"output", Write, "--output writes the output to a file"},
	{"ext-diff", Unknown, "--ext-diff runs the external diff program"},
	{"textconv", Unknown, "--textconv runs textconv filters"},
	{"filters", Unknown, "--filters runs content filters"},
	{"open-files-in-pager", Unknown, "--open-files-in-pager runs a pager"},
	{"show-signature", Unknown, "--show-signature runs gpg"},
	{"exec", Unknown, "--exec runs a program"},
	{"upload-pack", Unknown, "runs a program"},
	{"receive-pack", Unknown, "runs a program"},
	{"remote", Unknown, "--remote contacts another repository"},
	{"paginate", Unknown, "runs a pager"},
}

type gitState struct {
	aliases map[string]arg
	depth   int
}

func gitCmd(c *classifier, x *cmd) {
	mark := c.mark()
	st := &gitState{}
	args := x.args
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			if a.mayBeOption() {
				c.argAt(Unknown, a, "argument decided at run time may be an option")
				return
			}
			break
		}
		if !strings.HasPrefix(a.text, "-") {
			break
		}
		name, _, hasEq := strings.Cut(a.text, "=")
		value := func() (arg, bool) {
			if hasEq {
				_, v, _ := strings.Cut(a.text, "=")
				return arg{text: v, static: true, pos: a.pos, end: a.end}, true
			}
			if i+1 >= len(args) {
				return arg{}, false
			}
			i++
			return args[i], true
		}
		switch name {
		case "-P", "--no-pager", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
			"--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch", "--no-advice":
		case "--attr-source":
			value()
		case "-p", "--paginate":
			c.argAt(Unknown, a, "git -p pipes the output to a pager")
		case "-C":
			if v, ok := value(); !ok || !(v.is(".") || v.is("./")) {
				c.argAt(Unknown, a, "git -C runs in another repository, whose configuration (fsmonitor, diff drivers, textconv) can run programs")
			}
		case "-c":
			v, ok := value()
			if !ok {
				c.argAt(Unknown, a, "git -c without a value")
				continue
			}
			c.gitConfigOverride(v, st)
		case "--exec-path":
			if hasEq {
				c.argAt(Unknown, a, "--exec-path=DIR runs git programs from DIR")
				return
			}
			c.finishArg(mark, x.at, "git --exec-path prints a directory")
			return
		case "--html-path", "--man-path", "--info-path", "--version", "--list-cmds":
			c.finishArg(mark, x.at, "git prints a path or its version")
			return
		case "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--bare", "--config-env":
			if name != "--bare" {
				value()
			}
			c.argAt(Unknown, a, name+" points git at another repository or configuration")
		case "-h", "--help":
			c.argAt(Unknown, a, "git help opens a pager or browser")
		default:
			c.argAt(Unknown, a, "git option "+name+" is not in the table of known options")
			return
		}
	}
	if i >= len(args) {
		c.finishArg(mark, x.at, "git with no subcommand prints usage")
		return
	}
	c.gitVerb(st, args[i], args[i+1:])
	if !c.raised(mark) {
		c.argAt(ReadOnly, x.span(), "git "+args[i].text+" only reads the repository")
		c.res.gitAt = append(c.res.gitAt, c.res.reasons[len(c.res.reasons)-1])
	}
}

func (c *classifier) gitConfigOverride(v arg, st *gitState) {
	if !v.static {
		c.argAt(Unknown, v, "git -c value decided at run time")
		return
	}
	key, val, _ := strings.Cut(v.text, "=")
	key = strings.ToLower(key)
	if name, ok := strings.CutPrefix(key, "alias."); ok {
		if st.aliases == nil {
			st.aliases = map[string]arg{}
		}
		a := v
		a.text, a.static = val, true
		st.aliases[name] = a
	}
	// Even keys that only format output are not proven harmless by the
	// anchors (every one rejects -c); an alias is classified as well.
	c.argAt(Unknown, v, "git -c "+key+" overrides configuration; many keys run programs (core.pager, core.fsmonitor, diff.external, alias.*)")
}

func knownGitVerb(verb string) bool {
	return gitWrites[verb] != "" || gitOpaque[verb] != "" || gitReads[verb] || gitSpecial[verb] != nil
}

func (c *classifier) gitVerb(st *gitState, v arg, rest []arg) {
	if !v.static {
		c.argAt(Unknown, v, "git subcommand decided at run time")
		return
	}
	verb := v.text
	if al, ok := st.aliases[strings.ToLower(verb)]; ok && !knownGitVerb(verb) {
		c.gitAlias(st, al, rest)
		return
	}
	for i, a := range rest {
		if a.is("--help") {
			c.argAt(Unknown, a, "--help opens a pager or browser")
			return
		}
		if strings.Contains(a.text, "%G") || strings.Contains(a.text, "%(signature") {
			c.argAt(Unknown, a, "signature placeholders run gpg")
		}
		// A format decided at run time may hold signature placeholders.
		if !a.static && (strings.HasPrefix(a.text, "--format") || strings.HasPrefix(a.text, "--pretty")) ||
			!a.static && i > 0 && (rest[i-1].is("--format") || rest[i-1].is("--pretty")) {
			c.argAt(Unknown, a, "format decided at run time may run gpg (%G placeholders)")
		}
	}
	switch {
	case gitWrites[verb] != "":
		c.gitWrite(verb, v, rest)
	case gitOpaque[verb] != "":
		c.argAt(Unknown, v, "git "+verb+" "+gitOpaque[verb])
	case gitReads[verb]:
		c.gitDeny(rest)
	case gitSpecial[verb] != nil:
		gitSpecial[verb](c, v, rest)
	default:
		c.argAt(Unknown, v, "git subcommand not known (an alias or an external git-"+verb+" program?)")
	}
}

// gitAlias classifies an alias set with git -c alias.NAME=VALUE: a value
// starting with ! is a shell script; otherwise it is git arguments.
func (c *classifier) gitAlias(st *gitState, al arg, rest []arg) {
	if script, ok := strings.CutPrefix(al.text, "!"); ok {
		c.nested(script, arg{pos: al.pos, end: al.end})
		return
	}
	if strings.ContainsAny(al.text, "'\"\\") || st.depth >= maxDepth {
		c.argAt(Unknown, al, "git alias with quoting or nested too deeply")
		return
	}
	var args []arg
	for _, f := range strings.Fields(al.text) {
		args = append(args, arg{text: f, static: true, pos: al.pos, end: al.end})
	}
	if len(args) == 0 {
		c.argAt(Unknown, al, "empty git alias")
		return
	}
	st.depth++
	c.gitVerb(st, args[0], append(args[1:], rest...))
}

func (c *classifier) gitWrite(verb string, v arg, rest []arg) {
	dry := map[string]bool{"add": true, "clean": true, "mv": true, "rm": true}[verb]
	for _, a := range rest {
		if a.is("--") {
			break
		}
		if !a.static || !strings.HasPrefix(a.text, "-") {
			continue
		}
		name, _, _ := strings.Cut(a.text, "=")
		isDry := len(name) > 3 && strings.HasPrefix("--dry-run", name)
		if dry && !strings.HasPrefix(a.text, "--") && strings.ContainsRune(a.text[1:], 'n') {
			isDry = true
		}
		if isDry {
			c.argAt(Unknown, a, "git "+verb+" --dry-run only reports, but the classifier does not prove it")
			return
		}
	}
	c.argAt(Write, v, "git "+verb+" "+gitWrites[verb])
}

// gitDeny checks the arguments of a read subcommand: it reports options
// that write or run programs and returns the operands. Options are
// matched by name and by any abbreviation, short options anywhere in a
// cluster, so an unknown spelling errs towards Unknown.
func (c *classifier) gitDeny(args []arg) []arg {
	var ops []arg
	for a := range c.optionWords(args, &ops) {
		s := a.text
		if !strings.HasPrefix(s, "--") {
			if strings.ContainsRune(s[1:], 'O') {
				c.argAt(Unknown, a, "-O opens files in a pager (git grep) or reads an order file")
			}
			continue
		}
		name, _, _ := strings.Cut(s[2:], "=")
		for _, d := range gitDenyLong {
			if name != "" && strings.HasPrefix(d.name, name) {
				c.argAt(d.class, a, d.why)
				break
			}
		}
	}
	return ops
}

// gitSpecial are subcommands with both read and write forms.
var gitSpecial = map[string]func(c *classifier, v arg, rest []arg){
	"branch": gitBranch, "tag": gitTag, "config": gitConfig, "stash": gitStash, "remote": gitRemote,
	"worktree": gitWorktree, "reflog": gitReflog, "notes": gitNotes, "submodule": gitSubmodule,
	"symbolic-ref": gitSymbolicRef, "hash-object": gitHashObject, "interpret-trailers": gitTrailers,
	"apply": gitApply, "archive": gitArchive, "bisect": gitBisect, "format-patch": gitFormatPatch, "lfs": gitLFS,
}

var (
	gitBranchOpts = parseOpts(`-a --all -r --remotes -l --list -v --verbose -q --quiet --show-current
		--contains:: --no-contains:: --merged:: --no-merged:: --points-at: --sort: --format: --column::
		--no-column --color:: --no-color --abbrev:: --no-abbrev -i --ignore-case --omit-empty --no-omit-empty
		-d!w --delete!w -D!w -m!w --move!w -M!w -c!w --copy!w -C!w -f!w --force!w -u:!w --set-upstream-to:!w
		--unset-upstream!w --edit-description!w -t::!w --track::!w --no-track!w --create-reflog!w
		--recurse-submodules!w --set-upstream!w`)
	gitTagOpts = parseOpts(`-l --list -n:: --contains:: --no-contains:: --merged:: --no-merged:: --points-at:
		--sort: --format: --column:: --no-column --color:: --no-color -i --ignore-case --omit-empty
		-a!w --annotate!w -s!w --sign!w --no-sign!w -u:!w --local-user:!w -f!w --force!w -d!w --delete!w
		-m:!w --message:!w -F:!w --file:!w -e!w --edit!w --cleanup:!w --create-reflog!w --trailer:!w
		-v!u --verify!u`)
	gitConfigOpts = parseOpts(`--global --system --local --worktree -f: --file: --blob: --get --get-all
		--get-regexp --get-urlmatch --get-color --get-colorbool -l --list --show-origin --show-scope --name-only
		-z --null --type: --bool --int --bool-or-int --path --expiry-date --default: --includes --no-includes
		--fixed-value --no-type --all --regexp --url: --value:
		--add!w --replace-all!w --unset!w --unset-all!w --rename-section!w --remove-section!w -e!w --edit!w
		--comment:!w`)
)

// gitListing classifies branch and tag: they list with no operands or
// with a list option, and create a ref from an operand otherwise.
func (c *classifier) gitListing(t *optTable, what string, rest []arg) {
	list := false
	var ops []arg
	for it := range c.options(getopt{t: t, args: rest}, &ops) {
		switch {
		case it.opt.class != ReadOnly:
			c.argAt(it.opt.class, it.at, "git "+what+" "+it.opt.name+" changes refs or runs a program")
		default:
			switch it.opt.name {
			case "-l", "--list", "-n", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at":
				list = true
			}
		}
	}
	if len(ops) > 0 && !list {
		c.argAt(Write, ops[0], "git "+what+" NAME creates a "+what)
	}
}

func gitBranch(c *classifier, v arg, rest []arg) { c.gitListing(gitBranchOpts, "branch", rest) }
func gitTag(c *classifier, v arg, rest []arg)    { c.gitListing(gitTagOpts, "tag", rest) }

func gitConfig(c *classifier, v arg, rest []arg) {
	get := false
	var ops []arg
	for it := range c.options(getopt{t: gitConfigOpts, args: rest}, &ops) {
		switch {
		case it.opt.class != ReadOnly:
			c.argAt(it.opt.class, it.at, "git config "+it.opt.name+" changes configuration")
		case strings.HasPrefix(it.opt.name, "--get") || it.opt.name == "-l" || it.opt.name == "--list":
			get = true
		}
	}
	if len(ops) == 0 {
		return
	}
	switch {
	case ops[0].is("get") || ops[0].is("list"):
	case ops[0].is("set") || ops[0].is("unset") || ops[0].is("rename-section") || ops[0].is("remove-section") || ops[0].is("edit"):
		c.argAt(Write, ops[0], "git config "+ops[0].text+" changes configuration")
	case !get && len(ops) >= 2:
		c.argAt(Write, ops[1], "git config KEY VALUE sets configuration")
	case !get && ops[0].multi:
		c.argAt(Unknown, ops[0], "operand may become several words, which would set configuration")
	}
}

// gitSub finds the subcommand of stash, remote, worktree and the like:
// the first operand, after options.
func gitSub(rest []arg) (int, bool) {
	for i, a := range rest {
		if !a.static {
			return i, false
		}
		if !strings.HasPrefix(a.text, "-") {
			return i, true
		}
	}
	return len(rest), true
}

func gitStash(c *classifier, v arg, rest []arg) {
	i, ok := gitSub(rest)
	switch {
	case !ok:
		c.argAt(Unknown, rest[i], "git stash subcommand decided at run time")
	case i < len(rest) && (rest[i].is("list") || rest[i].is("show")):
		c.gitDeny(rest[i+1:])
	default:
		c.argAt(Write, v, "git stash saves, applies or drops stashes")
	}
}

func gitRemote(c *classifier, v arg, rest []arg) {
	i, ok := gitSub(rest)
	switch {
	case !ok:
		c.argAt(Unknown, rest[i], "git remote subcommand decided at run time")
	case i == len(rest) || rest[i].is("get-url"):
		c.gitDeny(rest)
	case rest[i].is("show"):
		for _, a := range rest[i+1:] {
			if a.is("-n") {
				return
			}
		}
		c.argAt(Unknown, rest[i], "git remote show contacts the remote")
	default:
		switch rest[i].text {
		case "add", "rename", "remove", "rm", "set-head", "set-branches", "set-url", "prune", "update":
			c.argAt(Write, rest[i], "git remote "+rest[i].text+" changes remotes or refs")
		default:
			c.argAt(Unknown, rest[i], "git remote subcommand not known")
		}
	}
}

// gitReadSub builds a handler for subcommands whose read forms are listed.
func gitReadSub(what string, bare bool, reads ...string) func(c *classifier, v arg, rest []arg) {
	return func(c *classifier, v arg, rest []arg) {
		i, ok := gitSub(rest)
		switch {
		case !ok:
			c.argAt(Unknown, rest[i], "git "+what+" subcommand decided at run time")
			return
		case i == len(rest):
			if !bare {
				c.argAt(Write, v, "git "+what+" changes the repository")
			}
			return
		}
		for _, r := range reads {
			if rest[i].is(r) {
				c.gitDeny(rest[i+1:])
				return
			}
		}
		c.argAt(Write, rest[i], "git "+what+" "+rest[i].text+" changes the repository")
	}
}

var (
	gitWorktree = gitReadSub("worktree", true, "list")
	gitNotes    = gitReadSub("notes", true, "list", "show", "get-ref")
)

func gitReflog(c *classifier, v arg, rest []arg) {
	i, ok := gitSub(rest)
	if ok && i < len(rest) {
		switch rest[i].text {
		case "expire", "delete", "drop":
			c.argAt(Write, rest[i], "git reflog "+rest[i].text+" changes reflogs")
			return
		case "show", "list", "exists":
			c.gitDeny(rest[i+1:])
			return
		}
	}
	c.gitDeny(rest)
}

func gitSubmodule(c *classifier, v arg, rest []arg) {
	i, ok := gitSub(rest)
	switch {
	case !ok:
		c.argAt(Unknown, rest[i], "git submodule subcommand decided at run time")
	case i == len(rest) || rest[i].is("status") || rest[i].is("summary"):
		c.argAt(Unknown, v, "git submodule runs git in each submodule, with its own configuration")
	case rest[i].is("foreach"):
		c.argAt(Unknown, rest[i], "git submodule foreach runs a command in each submodule")
		cmd := rest[i+1:]
		for len(cmd) > 0 && (cmd[0].is("--recursive") || cmd[0].is("-q") || cmd[0].is("--quiet")) {
			cmd = cmd[1:]
		}
		if len(cmd) > 0 {
			c.joined(cmd, "git submodule foreach runs this command")
		}
	default:
		c.argAt(Write, rest[i], "git submodule "+rest[i].text+" changes submodules")
	}
}

func gitSymbolicRef(c *classifier, v arg, rest []arg) {
	ops := c.gitDeny(rest)
	for _, a := range rest {
		if a.is("-d") || a.is("--delete") {
			c.argAt(Write, a, "git symbolic-ref -d deletes a ref")
		}
	}
	if len(ops) >= 2 {
		c.argAt(Write, ops[1], "git symbolic-ref NAME REF changes a ref")
	}
}

// gitFlag reports whether args hold a long option (or an abbreviation of
// at least min bytes) or a short letter in a cluster, before "--".
func gitFlag(args []arg, long string, min int, short byte) (arg, bool) {
	for _, a := range args {
		if a.is("--") {
			break
		}
		if !a.static || !strings.HasPrefix(a.text, "-") {
			continue
		}
		if name, ok := strings.CutPrefix(a.text, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			if len(name) >= min && strings.HasPrefix(long, name) {
				return a, true
			}
		} else if short != 0 && strings.IndexByte(a.text[1:], short) >= 0 {
			return a, true
		}
	}
	return arg{}, false
}

func gitHashObject(c *classifier, v arg, rest []arg) {
	c.gitDeny(rest)
	if a, ok := gitFlag(rest, "", 99, 'w'); ok {
		c.argAt(Write, a, "git hash-object -w writes an object")
	}
}

func gitTrailers(c *classifier, v arg, rest []arg) {
	c.gitDeny(rest)
	if a, ok := gitFlag(rest, "in-place", 2, 0); ok {
		c.argAt(Write, a, "git interpret-trailers --in-place edits files")
	}
}

func gitApply(c *classifier, v arg, rest []arg) {
	c.gitDeny(rest)
	report := false
	for _, o := range []string{"check", "stat", "numstat", "summary"} {
		if _, ok := gitFlag(rest, o, len(o), 0); ok {
			report = true
		}
	}
	if _, ok := gitFlag(rest, "apply", 3, 0); ok || !report {
		c.argAt(Write, v, "git apply changes files")
	}
}

func gitArchive(c *classifier, v arg, rest []arg) {
	c.gitDeny(rest)
	if a, ok := gitFlag(rest, "output", 1, 'o'); ok {
		c.argAt(Write, a, "git archive -o writes the archive to a file")
	}
}

func gitBisect(c *classifier, v arg, rest []arg) {
	i, ok := gitSub(rest)
	switch {
	case ok && i < len(rest) && (rest[i].is("log") || rest[i].is("terms")):
	case ok && i < len(rest) && (rest[i].is("view") || rest[i].is("visualize")):
		c.argAt(Unknown, rest[i], "git bisect view opens gitk or a pager")
	default:
		c.argAt(Write, v, "git bisect moves HEAD and records state")
	}
}

func gitFormatPatch(c *classifier, v arg, rest []arg) {
	c.gitDeny(rest)
	if _, ok := gitFlag(rest, "stdout", 3, 0); !ok {
		c.argAt(Write, v, "git format-patch writes patch files")
	}
}

func gitLFS(c *classifier, v arg, rest []arg) {
	i, ok := gitSub(rest)
	switch {
	case !ok || i == len(rest):
		c.argAt(Unknown, v, "git lfs subcommand not known")
	case rest[i].is("ls-files") || rest[i].is("status") || rest[i].is("env") || rest[i].is("version") ||
		(rest[i].is("track") && i == len(rest)-1):
	default:
		c.argAt(Write, rest[i], "git lfs "+rest[i].text+" changes files, hooks or a remote")
	}
}
