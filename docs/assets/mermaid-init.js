// Draws every ```mermaid block of the site (rendered as <div class="mermaid">
// by pymdownx.superfences, mkdocs.yml) with the pinned mermaid.min.js that
// hack/docs.sh puts beside this file.
mermaid.initialize({ startOnLoad: true, securityLevel: "strict" });
