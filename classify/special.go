package classify

// special maps programs with rules of their own to their handlers.
var special = map[string]handler{
	// Shell builtins.
	"cd": cdCmd, "pushd": cdCmd, "popd": cdCmd,
	"printf": printfCmd, "read": readCmd, "test": testCmd, "[": testCmd,
	"set": setCmd, "shopt": shoptCmd, "wait": waitCmd, "kill": killCmd,
	"history": historyCmd, "fc": fcCmd, "trap": trapCmd,
	"hash":   printsWithout("lt", "hash prints remembered programs"),
	"alias":  printsWithout("p", "alias prints aliases"),
	"umask":  printsWithout("pS", "umask prints the mask"),
	"ulimit": printsWithout("aHSbcdefiklmnpqrstuvxPRT", "ulimit prints limits"),
	"exit":   readOnlyBuiltin("ends the shell"), "return": readOnlyBuiltin("returns from a function"),
	"shift": readOnlyBuiltin("shifts positional parameters"), "break": readOnlyBuiltin("leaves a loop"),
	"continue": readOnlyBuiltin("continues a loop"),

	// Wrappers.
	"eval": evalCmd, "command": commandCmd, "builtin": builtinCmd, "exec": execCmd,
	"sh": shellCmd, "bash": shellCmd, "dash": shellCmd, "zsh": shellCmd, "ksh": shellCmd, "mksh": shellCmd,
	"fish": shellCmd, "csh": shellCmd, "tcsh": shellCmd,
	"env": envCmd, "timeout": timeoutCmd, "nohup": nohupCmd,
	"nice":   simpleWrapper(niceOpts, "nice prints the niceness"),
	"stdbuf": simpleWrapper(stdbufOpts, ""),
	"time":   simpleWrapper(timeOpts, ""),
	"sudo":   sudoCmd, "doas": sudoCmd, "xargs": xargsCmd, "flock": flockCmd, "watch": watchCmd, "script": scriptCmd,

	// Programs with flags or operands that write or run code.
	"git": gitCmd, "find": findCmd, "sed": sedCmd,
	"awk": awkCmd, "gawk": awkCmd, "mawk": awkCmd, "nawk": awkCmd, "busybox": busyboxCmd,
	"rg": rgCmd, "fd": fdCmd, "fdfind": fdCmd, "tree": treeCmd, "base64": base64Cmd, "base32": base64Cmd,
	"basenc": base64Cmd, "xxd": xxdCmd, "jq": jqCmd, "yq": yqCmd, "tar": tarCmd, "unzip": unzipCmd,
	"7z": sevenZipCmd, "7za": sevenZipCmd, "7zz": sevenZipCmd,
	"gzip": compressCmd, "gunzip": compressCmd, "bzip2": compressCmd, "bunzip2": compressCmd,
	"xz": compressCmd, "unxz": compressCmd, "lzma": compressCmd, "unlzma": compressCmd, "zstd": compressCmd,
	"unzstd": compressCmd, "lz4": compressCmd, "brotli": compressCmd, "compress": compressCmd, "uncompress": compressCmd,
	"curl": curlCmd, "wget": wgetCmd, "dd": ddCmd, "perl": perlCmd, "lsof": lsofCmd, "ip": ipCmd,
	"systemctl": systemctlCmd, "docker": dockerCmd, "podman": dockerCmd, "kubectl": kubectlCmd, "helm": kubectlCmd,
	"gh": ghCmd, "gofmt": gofmtCmd, "tput": tputCmd, "stty": sttyCmd,
	"mount": mountCmd, "defaults": defaultsCmd, "ssh": sshCmd, "crontab": crontabCmd, "service": serviceCmd,
	"npm": pkgCmd, "yarn": pkgCmd, "pnpm": pkgCmd, "pip": pkgCmd, "pip3": pkgCmd, "uv": pkgCmd, "poetry": pkgCmd,
	"cargo": pkgCmd, "go": pkgCmd, "gem": pkgCmd, "bundle": pkgCmd, "composer": pkgCmd, "brew": pkgCmd,
	"apt": pkgCmd, "apt-get": pkgCmd, "dnf": pkgCmd, "yum": pkgCmd, "pacman": pkgCmd, "apk": pkgCmd,
	"zypper": pkgCmd, "port": pkgCmd, "conda": pkgCmd, "mamba": pkgCmd, "terraform": pkgCmd, "rustup": pkgCmd,
	"nix": pkgCmd, "dpkg": pkgCmd, "rpm": pkgCmd,
}
