package validate

import (
	"fmt"
	"regexp"
	"sort"
)

var dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (v *validator) packages() {
	v.pkgs = make(map[string]*pkgState, len(v.c.Packages))
	for _, p := range v.c.Packages {
		switch {
		case p.Name == "":
			v.add(p.Pos, "package-no-name", "", "", "", "olm.package blob has no name", "set \"name\" to the package name")
			continue
		case v.pkgs[p.Name] != nil:
			first := v.pkgs[p.Name].p.Pos
			v.add(p.Pos, "package-duplicate", p.Name, "", "",
				fmt.Sprintf("package %q is declared twice (first at %s:%d)", p.Name, first.File, first.Line),
				"keep one olm.package blob per package")
			continue
		case len(p.Name) > 63 || !dns1123Label.MatchString(p.Name):
			v.add(p.Pos, "package-name-not-dns1123", p.Name, "", "",
				fmt.Sprintf("package name %q is not a DNS-1123 label: at most 63 characters, lower-case letters, digits and '-', starting and ending with a letter or digit", p.Name),
				"rename the package (e.g. "+suggestLabel(p.Name)+")")
		}
		// the maps are made on first use: a catalog of many empty packages (hostile or not) costs no more
		// than its packages
		v.pkgs[p.Name] = &pkgState{p: p}
		v.pkgOrder = append(v.pkgOrder, v.pkgs[p.Name])
	}
}

func suggestLabel(name string) string {
	out := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z':
			out = append(out, c+'a'-'A')
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			out = append(out, c)
		default:
			out = append(out, '-')
		}
	}
	for len(out) > 0 && out[0] == '-' {
		out = out[1:]
	}
	for len(out) > 0 && out[len(out)-1] == '-' {
		out = out[:len(out)-1]
	}
	if len(out) > 63 {
		out = out[:63]
	}
	return fmt.Sprintf("%q", string(out))
}

// defaults checks each package's default channel and that it has channels at all.
func (v *validator) defaults() {
	for _, ps := range v.pkgOrder {
		p := ps.p
		chans := make([]string, 0, len(ps.chOrder))
		for _, c := range ps.chOrder {
			chans = append(chans, c.Name)
		}
		sort.Strings(chans)
		switch {
		case p.DefaultChannel == "":
			hint := "set \"defaultChannel\" to one of its channels"
			if len(chans) > 0 {
				hint += ": " + quoted(chans)
			}
			v.add(p.Pos, "default-channel-missing", p.Name, "", "",
				fmt.Sprintf("package %q has no defaultChannel", p.Name), hint)
		case ps.channels[p.DefaultChannel] == nil:
			v.add(p.Pos, "default-channel-not-found", p.Name, p.DefaultChannel, "",
				fmt.Sprintf("defaultChannel %q is not a channel of package %q; channels are: %s", p.DefaultChannel, p.Name, names(ps.channels)),
				"point defaultChannel at an existing channel, or add an olm.channel blob with that name")
		}
		if len(ps.chOrder) == 0 {
			v.add(p.Pos, "package-no-channels", p.Name, "", "",
				fmt.Sprintf("package %q has no channels", p.Name), "add at least one olm.channel blob for it")
		}
	}
}
