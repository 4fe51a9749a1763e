package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
		fmt.Fprintf(s.err, "acpmux %s: %v\nRun 'acpmux %s --help' for usage.\n", name, err, name)
		return true, 2
	}
	return false, 0
}

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
