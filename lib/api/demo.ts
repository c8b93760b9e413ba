/**
 * A small page served by the API itself, so the first call a newcomer makes works on any machine,
 * offline: `npm start` allows exactly this URL of its own origin and prints a curl line for it.
 */
export const DEMO_PATH = '/demo';

export function demoPage(): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>browserfn demo — sign in</title>
<style>
  body { font: 16px system-ui, sans-serif; max-width: 26rem; margin: 3rem auto; padding: 0 1rem; }
  label { display: block; margin-top: 1rem; }
  input[type=email], input[type=password] { width: 100%; padding: .4rem; }
  button { margin-top: 1rem; padding: .5rem 1.2rem; }
</style></head>
<body>
<main>
  <h1>Sign in to the demo</h1>
  <form id="login">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" placeholder="you@example.com">
    <label for="password">Password</label>
    <input id="password" name="password" type="password">
    <label><input type="checkbox" name="remember"> Remember me</label>
    <button type="submit">Sign in</button>
  </form>
  <p id="status" role="status"></p>
</main>
<script>
  document.getElementById('login').addEventListener('submit', (e) => {
    e.preventDefault();
    const email = document.getElementById('email').value || 'nobody';
    document.getElementById('status').textContent = 'Signed in as ' + email;
  });
</script>
</body>
</html>
`;
}

/**
 * A small shop catalogue beside the sign-in page, for trying `extract`, `agent`, `run` and workflows
 * offline: a list at `/demo/catalogue` and one page per product. The examples/ folder is written
 * against these pages (`examples/catalogue.workflow.json` reads them with zero tokens).
 */
export const DEMO_CATALOGUE_PATH = `${DEMO_PATH}/catalogue`;

export interface DemoProduct {
  slug: string;
  name: string;
  price: number;
  stock: number;
  blurb: string;
}

export const DEMO_PRODUCTS: readonly DemoProduct[] = [
  {
    slug: 'steel-kettle',
    name: 'Steel Kettle',
    price: 24.9,
    stock: 12,
    blurb: 'Boils 1.7 litres in four minutes.',
  },
  { slug: 'tall-mug', name: 'Tall Mug', price: 8.5, stock: 40, blurb: 'Stoneware, holds 450 ml.' },
  { slug: 'oak-board', name: 'Oak Cutting Board', price: 32, stock: 0, blurb: 'End grain, 40 × 25 cm.' },
  { slug: 'tea-towel', name: 'Linen Tea Towel', price: 6.75, stock: 85, blurb: 'Washed linen, 50 × 70 cm.' },
];

/** Every path of the demo the local server lets pages open (exact paths, like the guard's allowUrls). */
export const DEMO_PATHS: readonly string[] = [
  DEMO_PATH,
  DEMO_CATALOGUE_PATH,
  ...DEMO_PRODUCTS.map((p) => `${DEMO_CATALOGUE_PATH}/${p.slug}`),
];

const html = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const shell = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${html(title)}</title>
<style>
  body { font: 16px system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
  .product-list { list-style: none; padding: 0; }
  .product-card { display: flex; justify-content: space-between; padding: .6rem 0; border-bottom: 1px solid #ddd; }
  .out { color: #a00; }
</style></head>
<body>
${body}
</body>
</html>
`;

const money = (n: number) => n.toFixed(2);

export function demoCataloguePage(): string {
  const items = DEMO_PRODUCTS.map(
    (p) => `    <li class="product-card">
      <a class="product-link" href="${DEMO_CATALOGUE_PATH}/${p.slug}"><span class="product-name">${html(p.name)}</span></a>
      <span class="product-price">${money(p.price)}</span>
    </li>`,
  ).join('\n');
  return shell(
    'browserfn demo — catalogue',
    `<main>
  <h1>Demo catalogue</h1>
  <p>${DEMO_PRODUCTS.length} products. Prices in EUR.</p>
  <ul class="product-list">
${items}
  </ul>
</main>`,
  );
}

/** A product's page, or undefined for a slug the catalogue does not have (the server answers 404). */
export function demoProductPage(slug: string): string | undefined {
  const p = DEMO_PRODUCTS.find((x) => x.slug === slug);
  if (!p) return undefined;
  const stock = p.stock > 0 ? `${p.stock} in stock` : 'Out of stock';
  return shell(
    `${p.name} — browserfn demo`,
    `<main>
  <p><a href="${DEMO_CATALOGUE_PATH}">Back to the catalogue</a></p>
  <h1 class="product-name">${html(p.name)}</h1>
  <p>Price: <span class="product-price">${money(p.price)}</span> EUR</p>
  <p class="product-stock${p.stock > 0 ? '' : ' out'}">${stock}</p>
  <p class="product-blurb">${html(p.blurb)}</p>
  <button type="button"${p.stock > 0 ? '' : ' disabled'}>Add to cart</button>
</main>`,
  );
}
