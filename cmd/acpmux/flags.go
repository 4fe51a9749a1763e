package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
)

// parseArgs runs parse (fs.Parse or a variant) quietly. With -h or --help it
// prints help to stdout and reports done with status 0; with a bad flag it
// prints the error and a hint to stderr and reports done with status 2.
func parseArgs(name string, fs *flag.FlagSet, s stdio, help func(w io.Writer), parse func() error) (done bool, code int) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := parse()
	switch {
	case errors.Is(err, flag.ErrHelp):
		help(s.out)
		return true, 0
	case err != nil:
		fmt.Fprintf(s.err, "acpmux %s: %s\nRun 'acpmux %s --help' for usage.\n", name, twoDashes(err), name)
		return true, 2
	}
	return false, 0
}

// flagNamed matches where the flag package names a flag in its errors
// ("not defined: -x", "for flag -x:", "needs an argument: -x").
var flagNamed = regexp.MustCompile(`(not defined: |for flag |needs an argument: )-([^-\s:][^\s:]*)`)

// twoDashes returns err's text with the flags it names written --name, as
// the help and the docs write them.
func twoDashes(err error) string { return flagNamed.ReplaceAllString(err.Error(), "${1}--$2") }

// writeFlags prints fs's flags as --name, with their argument type,
// usage and default, like flag.PrintDefaults but with two dashes.
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, usage)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}
