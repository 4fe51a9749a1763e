package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func init() {
	register(command{name: "config", summary: "print a command's effective settings and where each came from", run: configMain})
}

const configUsage = `Usage: acpmux config [--config FILE] [COMMAND [FLAGS...]]

Prints the settings COMMAND (default run) would use, as the TOML table of
the configuration file, each with where it came from: default, the file
and line, env VAR, or flag (FLAGS given here, as they would be given to
COMMAND). The configuration file is $XDG_CONFIG_HOME/acpmux/config.toml
(~/.config/acpmux/config.toml) unless --config names one; see
docs/config.md. A file with an unknown key or a mistyped value is an
error (status 2).

Flags:
`

func configMain(args []string, s stdio) int {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	registerConfigFlag(fs)
	help := func(w io.Writer) {
		fmt.Fprint(w, configUsage)
		writeFlags(w, fs)
		fmt.Fprintln(w, "\nCommands with settings: "+strings.Join(configurableCommands(), ", "))
	}
	if done, code := parseArgs("config", fs, s, help, func() error { return fs.Parse(args) }); done {
		return code
	}
	name, rest := "run", fs.Args()
	if len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	c, ok := commands[name]
	if !ok || c.flags == nil {
		fmt.Fprintf(s.err, "acpmux config: %q has no settings; commands with settings: %s\n", name, strings.Join(configurableCommands(), ", "))
		return 2
	}
	cfs := c.flags()
	if done, code := parseArgs("config", cfs, s, help, func() error { return cfs.Parse(rest) }); done {
		return code
	}
	if file := fs.Lookup("config").Value.String(); file != "" && cfs.Lookup("config").Value.String() == "" {
		cfs.Set("config", file)
	}
	origins, path, err := applyConfig(name, cfs)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux config:", err)
		return 2
	}
	if path == "" {
		p, _ := defaultConfigPath()
		path = p + " (not found)"
	}
	fmt.Fprintf(s.out, "# acpmux %s: effective settings; configuration file %s\n[%s]\n", name, path, name)
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	cfs.VisitAll(func(f *flag.Flag) {
		if f.Name != "config" {
			v := tomlValue(f)
			if origins[f.Name] == fromDefault {
				if d, ok := effectiveDefault(f); ok {
					v = d
				}
			}
			fmt.Fprintf(tw, "%s = %s\t# %s\n", f.Name, v, origins[f.Name])
		}
	})
	tw.Flush()
	return 0
}

// configurableCommands lists the commands whose flags the configuration
// file can set, sorted.
func configurableCommands() []string {
	var names []string
	for n, c := range commands {
		if c.flags != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// tomlValue writes f's current value as a TOML value of the type the
// configuration file takes for it.
func tomlValue(f *flag.Flag) string {
	g, _ := f.Value.(flag.Getter)
	if g == nil {
		return strconv.Quote(f.Value.String())
	}
	switch v := g.Get().(type) {
	case bool, int, int64, uint, uint64, float64:
		return fmt.Sprint(v)
	case time.Duration:
		return strconv.Quote(v.String())
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return strconv.Quote(f.Value.String())
}
