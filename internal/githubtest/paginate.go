package githubtest

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// paginate returns the page of items the request's per_page (default 30, at most 100) and page (default
// 1) select, and sets GitHub's Link header (first, prev, next, last) when there is more than one page.
func paginate[T any](c *call, items []T) []T {
	per := 30
	if v, err := strconv.Atoi(c.query.Get("per_page")); err == nil && v > 0 {
		per = min(v, 100)
	}
	page := 1
	if v, err := strconv.Atoi(c.query.Get("page")); err == nil && v > 0 {
		page = v
	}
	last := max(1, (len(items)+per-1)/per)
	if last > 1 {
		var links []string
		link := func(p int, rel string) {
			q := url.Values{}
			for k, vs := range c.query {
				q[k] = vs
			}
			q.Set("page", strconv.Itoa(p))
			links = append(links, fmt.Sprintf(`<%s%s?%s>; rel="%s"`, c.s.URL, c.path, q.Encode(), rel))
		}
		if page > 1 {
			link(page-1, "prev")
		}
		if page < last {
			link(page+1, "next")
		}
		link(last, "last")
		link(1, "first")
		c.header.Set("Link", strings.Join(links, ", "))
	}
	lo := min((page-1)*per, len(items))
	hi := min(lo+per, len(items))
	return items[lo:hi]
}
