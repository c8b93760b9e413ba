/** Generated pages the run benchmarks work on, served by an in-bench loopback HTTP server. */
/** A real-looking product page: nav, breadcrumbs, heading, price, specs table, reviews, footer. */
export function productPage(n: number): string {
  const name = `Product ${n} ${['Lamp', 'Chair', 'Desk', 'Shelf', 'Rug'][n % 5]}`;
  const specs = Array.from(
    { length: 8 },
    (_, i) => `<tr><th>Spec ${i + 1}</th><td>${(n * 7 + i) % 97} units</td></tr>`,
  ).join('');
  const reviews = Array.from(
    { length: 4 },
    (_, i) =>
      `<li><b>Reviewer ${i}</b> <span>${(n + i) % 5} stars</span><p>Solid build, fair price, arrived on day ${i + 2}.</p></li>`,
  ).join('');
  const nav = Array.from({ length: 12 }, (_, i) => `<a href="/c/${i}">Category ${i}</a>`).join(' ');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${name}</title>
<style>body{font:15px sans-serif;margin:0}header,footer{background:#eef;padding:8px}main{padding:16px}</style></head>
<body><header><nav>${nav}</nav><form role="search"><input aria-label="Search" name="q"><button>Search</button></form></header>
<main><nav aria-label="Breadcrumb"><a href="/">Home</a> › <a href="/c/${n % 12}">Category ${n % 12}</a></nav>
<h1>${name}</h1><p class="price">$${(n % 400) + 19}.99</p><button>Add to cart</button>
<p>${'A well made item for everyday use. '.repeat(6)}</p><table>${specs}</table>
<section><h2>Reviews</h2><ul>${reviews}</ul></section></main>
<footer>${Array.from({ length: 10 }, (_, i) => `<a href="/f/${i}">Footer link ${i}</a>`).join(' ')}</footer></body></html>`;
}
