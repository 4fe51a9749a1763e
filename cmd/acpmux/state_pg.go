package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"

	"github.com/acpmux/acpmux/confirm/store/postgres"
)

// pgOpenError says, for a person, why the PostgreSQL --state rawURL could
// not be opened and what to check, as openState does for a SQLite file.
// err is postgres.Open's error, which never holds the password; neither
// does the result. other is the advice every message ends with.
func pgOpenError(rawURL string, err error, other string) error {
	where := postgres.Redact(rawURL)
	var host, user, db string
	if u, perr := url.Parse(rawURL); perr == nil {
		host, user, db = u.Host, u.User.Username(), strings.TrimPrefix(u.Path, "/")
		q := u.Query() // libpq's parameters in the query win
		host, user, db = cmp.Or(q.Get("host"), host), cmp.Or(q.Get("user"), user), cmp.Or(q.Get("dbname"), db)
		if p := q.Get("port"); p != "" {
			host += ":" + p
		}
	}
	var coded interface{ SQLState() string }
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("open decision store %s: no PostgreSQL server accepts connections at %s (check the URL's host and port, and that the server is running; %s)", where, host, other)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("open decision store %s: no answer from %s within %s (check the host, a firewall, and that the server is running; %s)", where, host, stateConnectTimeout, other)
	case errors.As(err, &coded) && (coded.SQLState() == "28P01" || coded.SQLState() == "28000"):
		return fmt.Errorf("open decision store %s: the server refused the login of user %q (check the password, from the URL, $PGPASSWORD or $PGPASSFILE, and the server's pg_hba.conf; %s)", where, user, other)
	case errors.As(err, &coded) && coded.SQLState() == "3D000":
		return fmt.Errorf("open decision store %s: database %q does not exist (create it, e.g. createdb %s; %s)", where, db, db, other)
	case errors.As(err, &coded) && coded.SQLState() == "42501":
		return fmt.Errorf("open decision store %s: user %q may not create acpmux's tables (grant it CREATE on the database's schema; %s)", where, user, other)
	}
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n\t", "; ")
	return fmt.Errorf("%s (check the URL, that the server is running, and the user's password and rights; %s)", msg, other)
}
