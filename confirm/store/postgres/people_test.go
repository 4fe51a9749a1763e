package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store/storetest"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestPeopleConformance runs the tokens, votes and chain suites on a real
// PostgreSQL server, each test on a fresh database, tampering with it
// through a connection of its own.
func TestPeopleConformance(t *testing.T) {
	srv := pgtest.Start(t)
	urls := map[storetest.PeopleStore]string{}
	storetest.RunPeople(t, func(t *testing.T) storetest.PeopleStore {
		url := srv.Database(t)
		s := open(t, url)
		urls[s] = url
		return s
	}, func(t *testing.T, s storetest.PeopleStore, q string) {
		conn, err := pgx.Connect(context.Background(), urls[s])
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	})
}
