package main

import "github.com/acpmux/acpmux/confirm/store"

// storeFeed is the store's event feed as GET /v1/events serves it at a
// process that appends nothing to it (acpmux inbox): every event of
// every bridge sharing the store, found by polling.
type storeFeed struct{ store.Feed }

// Changed implements httpapi.FeedSource: the inbox appends nothing, so
// there is never an append of this process (a nil channel is never
// ready).
func (storeFeed) Changed() <-chan struct{} { return nil }
