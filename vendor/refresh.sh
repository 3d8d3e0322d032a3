#!/bin/sh
# vendor/refresh.sh: re-fetches the pinned browser packages from npm and recopies the files we
# embed. Run from anywhere; needs `npm` and `tar`. The files land exactly as npm ships them;
# packages that ship no license file get one written here from the license their package.json
# declares. Then vendor/manifest.txt (what build.rs embeds: a path under vendor/ and the name it
# is served and referenced by) is written anew from what was copied.
set -eu

TURBO=8.0.23
STIMULUS=3.2.2
ACTIONCABLE=8.1.400
TRIX=2.1.19
LUCIDE=1.62.0
HIGHLIGHT=11.12.0

# highlight.js languages auto-detected in code blocks (spec/08 §1).
LANGUAGES="bash css diff go java javascript json python ruby rust sql xml"

# Only the icons the templates and CSS use (public/app.css names them as url(icons/<name>.svg)).
ICONS="arrow-down arrow-left at-sign bell-dot bell-off bell-ring bot camera check copy crown download
ellipsis eye-off file globe link loader-circle log-out menu message-circle paperclip pencil
plus qr-code reply search refresh-cw send-horizontal settings share-2 smile-plus trash-2 type users
x"

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

unpack() { # unpack <npm spec> <dir name>
	(cd "$tmp" && npm pack "$1" --silent >/dev/null)
	mkdir -p "$tmp/$2"
	tar xzf "$tmp"/*.tgz -C "$tmp/$2"
	rm -f "$tmp"/*.tgz
}

mit() { # mit <holder> <file>: the MIT text, for packages that declare MIT but ship no file
	cat > "$2" <<MIT
The package's package.json declares the MIT license; the npm package ships no license file,
so the standard MIT text follows.

Copyright (c) $1

Permission is hereby granted, free of charge, to any person obtaining a copy of this software
and associated documentation files (the "Software"), to deal in the Software without
restriction, including without limitation the rights to use, copy, modify, merge, publish,
distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
Software is furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING
BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
MIT
}

unpack "@hotwired/turbo@$TURBO" turbo
d="$here/@hotwired/turbo"; rm -rf "$d"; mkdir -p "$d"
cp "$tmp/turbo/package/dist/turbo.es2017-esm.js" "$tmp/turbo/package/package.json" "$d/"
mit "37signals LLC" "$d/LICENSE"

unpack "@hotwired/stimulus@$STIMULUS" stimulus
d="$here/@hotwired/stimulus"; rm -rf "$d"; mkdir -p "$d"
cp "$tmp/stimulus/package/dist/stimulus.js" "$tmp/stimulus/package/package.json" \
   "$tmp/stimulus/package/LICENSE.md" "$d/"

unpack "@rails/actioncable@$ACTIONCABLE" actioncable
d="$here/@rails/actioncable"; rm -rf "$d"; mkdir -p "$d"
cp "$tmp/actioncable/package/app/assets/javascripts/actioncable.esm.js" \
   "$tmp/actioncable/package/package.json" "$d/"
mit "David Heinemeier Hansson and the Rails core team" "$d/LICENSE"

unpack "trix@$TRIX" trix
d="$here/trix"; rm -rf "$d"; mkdir -p "$d"
cp "$tmp/trix/package/dist/trix.esm.min.js" "$tmp/trix/package/dist/trix.css" \
   "$tmp/trix/package/package.json" "$tmp/trix/package/LICENSE" "$d/"

unpack "lucide-static@$LUCIDE" lucide
d="$here/lucide-static"; rm -rf "$d"; mkdir -p "$d/icons"
cp "$tmp/lucide/package/package.json" "$tmp/lucide/package/LICENSE" "$d/"
for i in $ICONS; do cp "$tmp/lucide/package/icons/$i.svg" "$d/icons/"; done

unpack "@highlightjs/cdn-assets@$HIGHLIGHT" highlight
d="$here/highlight.js"; rm -rf "$d"; mkdir -p "$d/languages"
cp "$tmp/highlight/package/es/core.min.js" "$tmp/highlight/package/package.json" \
   "$tmp/highlight/package/LICENSE" "$d/"
for l in $LANGUAGES; do cp "$tmp/highlight/package/es/languages/$l.min.js" "$d/languages/"; done

{
	echo "@hotwired/turbo/turbo.es2017-esm.js turbo.js"
	echo "@hotwired/stimulus/stimulus.js stimulus.js"
	echo "@rails/actioncable/actioncable.esm.js actioncable.js"
	echo "trix/trix.esm.min.js trix.js"
	echo "trix/trix.css trix.css"
	echo "highlight.js/core.min.js highlight.js"
	for l in $LANGUAGES; do echo "highlight.js/languages/$l.min.js highlight/$l.js"; done
	for i in $ICONS; do echo "lucide-static/icons/$i.svg icons/$i.svg"; done
} > "$here/manifest.txt"

echo "vendor refreshed: turbo $TURBO, stimulus $STIMULUS, actioncable $ACTIONCABLE, trix $TRIX, lucide-static $LUCIDE, highlight.js $HIGHLIGHT"
