package classify

import (
	"fmt"
	"strings"
)

// The tables below decide most programs. A program is in at most one of
// them; handlers (programs with rules of their own) are in special.go and
// the files named after them. To add a program, add a row; every row is a
// claim about every option of that program, so read its manual first.

// inert lists programs that never write or run anything, whatever their
// options and operands: no flag of theirs opens a file for writing or
// starts a program. Expansions and globs in their arguments are harmless.
var inert = map[string]string{
	":": "does nothing", "true": "does nothing", "false": "does nothing",
	"echo": "prints its arguments", "pwd": "prints the directory", "sleep": "waits",
	"cat": "prints files", "tac": "prints files in reverse", "head": "prints the start of files",
	"tail": "prints the end of files", "wc": "counts", "nl": "numbers lines",
	"cut": "prints fields", "paste": "joins lines", "tr": "translates stdin", "column": "formats columns",
	"fold": "wraps lines", "fmt": "formats text", "expand": "converts tabs", "unexpand": "converts spaces",
	"pr": "paginates for printing", "rev": "reverses lines", "comm": "compares sorted files",
	"cmp": "compares files", "diff": "compares files", "diff3": "compares files", "join": "joins files",
	"look": "prints matching lines", "tsort": "sorts topologically", "numfmt": "formats numbers",
	"od": "dumps files", "hexdump": "dumps files", "strings": "prints strings in files",
	"readlink": "prints link targets", "realpath": "prints resolved paths", "basename": "prints a name",
	"dirname": "prints a directory name", "pathchk": "checks path names",
	"whoami": "prints the user", "id": "prints user ids", "groups": "prints groups", "users": "prints users",
	"who": "prints logins", "w": "prints logins", "logname": "prints the login name", "last": "prints logins",
	"uname": "prints system information", "arch": "prints the architecture", "hostid": "prints the host id",
	"nproc": "prints the CPU count", "uptime": "prints the uptime", "free": "prints memory use",
	"vmstat": "prints memory statistics", "iostat": "prints I/O statistics", "mpstat": "prints CPU statistics",
	"lscpu": "prints CPU information", "lsblk": "lists block devices", "lspci": "lists PCI devices",
	"lsusb": "lists USB devices", "lsmem": "lists memory", "locale": "prints locale settings",
	"getconf": "prints configuration values", "printenv": "prints the environment", "tty": "prints the terminal",
	"seq": "prints numbers", "factor": "factors numbers", "expr": "evaluates an expression",
	"yes": "prints a string repeatedly", "cal": "prints a calendar", "ncal": "prints a calendar",
	"md5sum": "prints checksums", "sha1sum": "prints checksums", "sha224sum": "prints checksums",
	"sha256sum": "prints checksums", "sha384sum": "prints checksums", "sha512sum": "prints checksums",
	"b2sum": "prints checksums", "cksum": "prints checksums", "sum": "prints checksums", "shasum": "prints checksums",
	"ls": "lists files", "dir": "lists files", "vdir": "lists files", "du": "prints disk usage",
	"df": "prints free space", "stat": "prints file status", "grep": "searches files",
	"egrep": "searches files", "fgrep": "searches files", "zgrep": "searches compressed files",
	"zegrep": "searches compressed files", "zfgrep": "searches compressed files",
	"zcat": "prints compressed files", "gzcat": "prints compressed files", "bzcat": "prints compressed files",
	"xzcat": "prints compressed files", "zstdcat": "prints compressed files", "lzcat": "prints compressed files",
	"zipinfo": "lists zip archives", "which": "prints program paths", "whereis": "prints program paths",
	"ps": "lists processes", "pgrep": "lists processes",
	"pidof": "prints process ids", "readelf": "prints ELF information", "nm": "prints symbols",
	"objdump": "prints object files", "size": "prints section sizes", "namei": "prints path components",
	"lsattr": "prints file attributes", "getfacl": "prints ACLs", "netstat": "prints network state",
	"clear": "clears the terminal", "type": "describes commands", "help": "prints builtin help",
	"jobs": "lists jobs", "times": "prints shell times", "dirs": "prints the directory stack",
	"caller": "prints the call stack", "sw_vers": "prints the macOS version", "mdls": "prints file metadata",
	"mdfind": "searches the Spotlight index", "pbpaste": "prints the clipboard",
}

// writers change files, processes or system state, whatever their
// arguments.
var writers = map[string]string{
	"rm": "removes files", "rmdir": "removes directories", "mv": "moves files", "cp": "copies files",
	"ln": "creates links", "link": "creates a link", "mkdir": "creates directories", "touch": "creates or updates files",
	"chmod": "changes modes", "chown": "changes owners", "chgrp": "changes groups", "chattr": "changes attributes",
	"setfacl": "changes ACLs", "truncate": "truncates files", "shred": "overwrites files", "unlink": "removes a file",
	"install": "copies files", "mkfifo": "creates FIFOs", "mknod": "creates device files", "rename": "renames files",
	"mktemp": "creates a file", "split": "writes pieces", "csplit": "writes pieces", "sponge": "writes a file",
	"patch": "changes files", "pkill": "signals processes", "killall": "signals processes",
	"umount": "unmounts file systems", "swapon": "enables swap", "swapoff": "disables swap",
	"shutdown": "stops the system", "reboot": "restarts the system", "halt": "stops the system", "poweroff": "stops the system",
	"useradd": "adds a user", "userdel": "removes a user", "usermod": "changes a user", "groupadd": "adds a group",
	"groupdel": "removes a group", "passwd": "changes a password", "chpasswd": "changes passwords",
	"renice": "changes priorities", "ldconfig": "rebuilds the linker cache", "update-alternatives": "changes links",
	"at": "schedules a job", "batch": "schedules a job", "logger": "writes to the system log",
	"zip": "writes an archive", "scp": "copies files to or from another host", "rsync": "copies files",
	"sftp": "transfers files", "git-lfs": "changes repository storage", "sudoedit": "edits files",
}

// opaque programs run code, reach the network, wait for a human, or do
// too much to bound from their arguments: never read-only.
var opaque = map[string]string{
	"python": "runs code", "python2": "runs code", "python3": "runs code", "pypy": "runs code", "pypy3": "runs code",
	"node": "runs code", "nodejs": "runs code", "deno": "runs code", "bun": "runs code", "ruby": "runs code",
	"php": "runs code", "lua": "runs code", "luajit": "runs code", "Rscript": "runs code", "julia": "runs code",
	"java": "runs code", "jshell": "runs code", "groovy": "runs code", "scala": "runs code", "kotlin": "runs code",
	"swift": "runs code", "dotnet": "runs code", "pwsh": "runs code", "powershell": "runs code",
	"osascript": "runs code", "tclsh": "runs code", "wish": "runs code", "irb": "runs code", "ipython": "runs code",
	"bc": "runs a calculator program", "dc": "runs a calculator program (! runs commands)",
	"source": "runs a script file", ".": "runs a script file",
	"make": "runs build rules, which run commands (even with -n)", "gmake": "runs build rules", "cmake": "runs build steps",
	"ninja": "runs build steps", "bazel": "runs build steps", "mvn": "runs builds", "gradle": "runs builds",
	"ant": "runs builds", "meson": "runs build steps", "scons": "runs builds", "just": "runs recipes", "task": "runs tasks",
	"pytest": "runs test code", "tox": "runs tests", "nox": "runs tests", "jest": "runs test code",
	"vitest": "runs test code", "mocha": "runs test code", "rspec": "runs test code", "phpunit": "runs test code",
	"npx": "downloads and runs packages", "pnpx": "downloads and runs packages", "bunx": "downloads and runs packages",
	"uvx": "downloads and runs packages", "pipx": "installs and runs packages",
	"rustc": "compiles code", "gcc": "compiles code", "cc": "compiles code", "g++": "compiles code", "c++": "compiles code",
	"clang": "compiles code", "clang++": "compiles code", "javac": "compiles code", "tsc": "compiles code",
	"eslint": "runs lint rules (--fix writes)", "prettier": "formats code (--write writes)", "black": "formats code",
	"ruff": "lints code (--fix writes)", "mypy": "checks code (writes a cache)", "pyright": "checks code",
	"vi": "edits files", "vim": "edits files", "nvim": "edits files", "nano": "edits files", "emacs": "edits files",
	"pico": "edits files", "ed": "edits files", "ex": "edits files", "code": "opens an editor", "subl": "opens an editor",
	"micro": "edits files", "hx": "edits files", "helix": "edits files", "joe": "edits files", "mcedit": "edits files",
	"less": "a pager (runs commands with !, LESSOPEN)", "more": "a pager (runs commands with !)", "most": "a pager",
	"pg": "a pager", "man": "a pager (-P, --html run programs)", "info": "a reader (-o writes)", "bat": "a pager",
	"top": "an interactive monitor", "htop": "an interactive monitor", "btop": "an interactive monitor",
	"parallel": "runs commands", "strace": "runs and traces a command",
	"ltrace": "runs and traces a command", "gdb": "runs a debugger", "lldb": "runs a debugger", "valgrind": "runs a command",
	"telnet": "opens a network connection", "nc": "opens a network connection",
	"ncat": "opens a network connection", "netcat": "opens a network connection", "socat": "opens connections",
	"ftp": "transfers files", "ping": "sends network traffic", "ping6": "sends network traffic",
	"traceroute": "sends network traffic", "tracepath": "sends network traffic", "mtr": "sends network traffic",
	"dig": "queries the network", "nslookup": "queries the network", "host": "queries the network",
	"whois": "queries the network", "http": "sends HTTP requests", "https": "sends HTTP requests", "xh": "sends HTTP requests",
	"aws": "calls a cloud API", "gcloud": "calls a cloud API", "az": "calls a cloud API",
	"open": "launches an application", "xdg-open": "launches an application", "start": "launches an application",
	"pbcopy": "changes the clipboard", "xclip": "changes the clipboard", "xsel": "changes the clipboard",
	"notify-send": "shows a notification", "getent": "may query the network through NSS (hosts, LDAP)", "ldd": "may run the program it inspects",
	"chroot": "runs a command in another root", "unshare": "runs a command", "nsenter": "runs a command",
	"setsid": "runs a command", "runuser": "runs a command as another user", "su": "runs a command as another user",
	"ionice": "runs a command", "chrt": "runs a command", "taskset": "runs a command", "unbuffer": "runs a command",
	"flatpak": "manages applications", "snap": "manages applications",
	"caffeinate": "runs a command", "systemd-run": "runs a command", "firejail": "runs a command", "bwrap": "runs a command",
	"expect":   "runs a script",
	"iptables": "reads or changes firewall rules", "nft": "reads or changes firewall rules", "ifconfig": "reads or changes interfaces",
	"fsck":  "checks or repairs file systems",
	"unset": "unsets variables", "unalias": "removes aliases", "enable": "changes builtins", "bind": "changes key bindings",
	"complete": "changes completion", "compgen": "may run completion functions", "compopt": "changes completion",
	"mapfile": "reads into an array (-C runs a callback)", "readarray": "reads into an array (-C runs a callback)",
	"disown": "changes jobs", "bg": "resumes jobs", "fg": "resumes jobs", "suspend": "stops the shell",
	"logout": "ends the shell", "getopts": "assigns variables", "let": "evaluates arithmetic",
	"declare": "declares variables", "typeset": "declares variables", "local": "declares variables",
	"export": "exports variables", "readonly": "declares variables",
}

// optPrograms are read-only unless an option or operand says otherwise.
// Options missing from a table make the command Unknown.
var optPrograms = map[string]*optProgram{
	"sort": {why: "sorts lines", opts: `-b --ignore-leading-blanks -d --dictionary-order -f --ignore-case
		-g --general-numeric-sort -h --human-numeric-sort -i --ignore-nonprinting -M --month-sort
		-n --numeric-sort -R --random-sort --random-source: -r --reverse -V --version-sort --sort:
		-k: --key: -c --check:: -C -m --merge -s --stable -S: --buffer-size: -t: --field-separator:
		--parallel: --batch-size: -u --unique -z --zero-terminated --files0-from: --debug --help --version
		-o:!w --output:!w -T:!u --temporary-directory:!u --compress-program:!u`,
		notes: map[string]string{"-o": "sort -o writes its output to a file", "--output": "sort --output writes its output to a file",
			"--compress-program": "runs a compression program", "-T": "writes temporary files in a chosen directory",
			"--temporary-directory": "writes temporary files in a chosen directory"}},
	"uniq": {why: "filters repeated lines", opts: `-c --count -d --repeated -D --all-repeated:: -f: --skip-fields:
		--group:: -i --ignore-case -s: --skip-chars: -u --unique -z --zero-terminated -w: --check-chars:
		--help --version -NUM`, operands: inputOutput},
	"tee": {why: "copies stdin to stdout", opts: `-a --append -i --ignore-interrupts -p --output-error:: --help --version`,
		operands: teeFiles},
	"date": {why: "prints the date", opts: `-d: --date: -f: --file: -I:: --iso-8601:: -r: --reference: -R --rfc-email
		--rfc-3339: -u --utc --universal --debug --resolution --help --version -s:!w --set:!w`,
		notes:    map[string]string{"-s": "date -s sets the system clock", "--set": "date --set sets the system clock"},
		operands: dateOperands},
	"file": {why: "identifies file types", opts: `-b --brief -c --checking-printout -d --debug -E -e: --exclude:
		--exclude-quiet: --extension -F: --separator: -f: --files-from: -h --no-dereference -i --mime --mime-type
		--mime-encoding -k --keep-going -l --list -L --dereference -m: --magic-file: -N --no-pad -n --no-buffer
		-P: --parameter: -r --raw -s --special-files -v --version -z --uncompress -Z --uncompress-noreport
		-0 --print0 --apple --help -S --no-sandbox -C!w --compile!w -p!u --preserve-date!u`,
		notes: map[string]string{"-C": "file -C compiles a magic file and writes it", "--compile": "file --compile writes a compiled magic file"}},
	"shuf": {why: "shuffles lines", opts: `-e --echo -i: --input-range: -n: --head-count: --random-source: -r --repeat
		-z --zero-terminated --help --version -o:!w --output:!w`},
	"iconv": {why: "converts encodings", opts: `-f: --from-code: -t: --to-code: -c -s --silent -l --list --verbose
		--help --usage --version -o:!w --output:!w`},
	"sdiff": {why: "compares files side by side", opts: `-i --ignore-case -E --ignore-tab-expansion -Z
		--ignore-trailing-space -b --ignore-space-change -W --ignore-all-space -B --ignore-blank-lines
		-I: --ignore-matching-lines: --strip-trailing-cr -a --text -w: --width: -l --left-column
		-s --suppress-common-lines -t --expand-tabs --tabsize: -d --minimal -H --speed-large-files
		--diff-program:!u --help -v --version -o:!w --output:!w`},
	"hostname": {why: "prints the host name", opts: `-a --alias -A --all-fqdns -d --domain -f --fqdn --long -i --ip-address
		-I --all-ip-addresses -s --short -y --yp --nis -h --help -V --version -F:!w --file:!w -b!w --boot!w`,
		operands: setsWhenGiven("hostname with an operand sets the host name")},
	"domainname": {why: "prints the domain name", opts: `-h --help -V --version`,
		operands: setsWhenGiven("domainname with an operand sets the domain name")},
	"sysctl": {why: "prints kernel parameters", opts: `-a --all -A -X -b --binary -e --ignore -N --names -n --values
		-q --quiet -r: --pattern: -h --help -V --version -w!w --write!w -p::!w --load::!w --system!w`,
		operands: sysctlOperands},
	"dmesg": {why: "prints kernel messages", opts: `-H --human -T --ctime -t --notime -l: --level: -f: --facility:
		-k --kernel -u --userspace -x --decode -r --raw -L:: --color:: -w --follow -W --follow-new -e --reltime
		-P --nopager -S --syslog --since: --until: -d --show-delta -F: --file: -s: --buffer-size: --time-format:
		-h --help -V --version -J --json -p --force-prefix
		-c!w --read-clear!w -C!w --clear!w -D!w --console-off!w -E!w --console-on!w -n:!w --console-level!w`},
	"journalctl": {why: "prints the journal", opts: `-u: --unit: --user-unit: -b:: --boot:: -f --follow -n: --lines:
		-e --pager-end -r --reverse -o: --output: -x --catalog -q --quiet -k --dmesg -p: --priority: -g: --grep:
		-S: --since: -U: --until: --no-pager -a --all --no-hostname --utc -t: --identifier: -l --full --no-full
		--system --user -m --merge -D: --directory: --file: -M: --machine: --list-boots --disk-usage -h --help
		--version --output-fields: --case-sensitive:: -F: --field: -N --fields -I
		--vacuum-size:!w --vacuum-time:!w --vacuum-files:!w --rotate!w --flush!w --sync!w --relinquish-var!w
		--smart-relinquish-var!w --update-catalog!w --setup-keys!w`},
	"ss": {why: "prints sockets", opts: `-h --help -V --version -n --numeric -r --resolve -a --all -l --listening
		-o --options -e --extended -m --memory -p --processes -i --info -s --summary -Z --context -z
		--contexts -N: --net: -b --bpf -E --events -4 --ipv4 -6 --ipv6 -0 --packet -t --tcp -u --udp -d --dccp
		-w --raw -x --unix -S --sctp --vsock -f: --family: -A: --query: --socket: -H --no-header -O --oneline
		--tipc --tipcinfo --tos --cgroup -M --mptcp --inet-sockopt --xdp -T --threads
		-K!w --kill!w -D:!w --diag:!w -F:!u --filter:!u`},
}

// optProgram is a program read with getopt against its option table.
type optProgram struct {
	why   string
	opts  string
	stop  bool // options end at the first operand
	notes map[string]string
	// operands checks the operands; nil accepts any.
	operands func(c *classifier, x *cmd, ops []arg)
	table    *optTable
}

func (p *optProgram) run(c *classifier, x *cmd) {
	mark := c.mark()
	ops := c.scanOpts(p.table, x.args, p.stop, p.notes)
	if p.operands != nil {
		p.operands(c, x, ops)
	}
	c.finishArg(mark, x.at, p.why)
}

// scanOpts reports every option that is not read-only and every word it
// cannot read, and returns the operands.
func (c *classifier) scanOpts(t *optTable, args []arg, stop bool, notes map[string]string) []arg {
	var ops []arg
	for it := range c.options(getopt{t: t, args: args, stop: stop}, &ops) {
		if it.opt.class == ReadOnly {
			continue
		}
		why := notes[it.opt.name]
		if why == "" && it.opt.class == Write {
			why = "option " + it.opt.name + " writes files or changes state"
		} else if why == "" {
			why = "option " + it.opt.name + " runs a program or has effects the classifier cannot bound"
		}
		c.argAt(it.opt.class, it.at, why)
	}
	return ops
}

// inputOutput is the operand rule of uniq: a second operand is the output file.
func inputOutput(c *classifier, x *cmd, ops []arg) {
	n, multi := countOps(ops)
	switch {
	case n >= 2:
		c.argAt(Write, ops[1], x.name+" writes its output to the second operand")
	case multi:
		c.argAt(Unknown, x.span(), "operands decided at run time may name an output file")
	}
}

func teeFiles(c *classifier, x *cmd, ops []arg) {
	for _, a := range ops {
		if !a.is("/dev/null") {
			c.argAt(Write, a, "tee writes to every file operand")
		}
	}
}

func dateOperands(c *classifier, x *cmd, ops []arg) {
	for _, a := range ops {
		if !a.static || !strings.HasPrefix(a.text, "+") {
			c.argAt(Write, a, "date with an operand that is not +FORMAT sets the system clock")
		}
	}
}

func sysctlOperands(c *classifier, x *cmd, ops []arg) {
	for _, a := range ops {
		if !a.static || strings.Contains(a.text, "=") {
			c.argAt(Write, a, "sysctl NAME=VALUE sets a kernel parameter")
		}
	}
}

func setsWhenGiven(why string) func(c *classifier, x *cmd, ops []arg) {
	return func(c *classifier, x *cmd, ops []arg) {
		if len(ops) > 0 {
			c.argAt(Write, ops[0], why)
		}
	}
}

// countOps counts operands; multi reports that some operand may become
// zero or several words.
func countOps(ops []arg) (n int, multi bool) {
	for _, a := range ops {
		if a.multi {
			multi = true
			continue
		}
		n++
	}
	return n, multi
}

// writer is the handler of the programs in writers.
func writer(why string) handler {
	return func(c *classifier, x *cmd) {
		if len(x.args) == 1 && (x.args[0].is("--help") || x.args[0].is("--version")) {
			c.argAt(Unknown, x.span(), "only asks for help or the version, but the program changes state")
			return
		}
		c.argAt(Write, x.at, x.name+" "+why)
	}
}

// handlers maps every known program to its handler.
var handlers = map[string]handler{}

func init() {
	set := func(name string, h handler) {
		if handlers[name] != nil {
			panic(fmt.Sprintf("classify: %s is in two tables", name))
		}
		handlers[name] = h
	}
	for name, why := range inert {
		set(name, func(c *classifier, x *cmd) { c.argAt(ReadOnly, x.at, x.name+" "+why) })
	}
	for name, why := range writers {
		set(name, writer(why))
	}
	for name, why := range opaque {
		set(name, func(c *classifier, x *cmd) { c.argAt(Unknown, x.at, x.name+" "+why) })
	}
	for name, p := range optPrograms {
		p.table = parseOpts(p.opts)
		set(name, p.run)
	}
	for name, h := range special {
		set(name, h)
	}
}
