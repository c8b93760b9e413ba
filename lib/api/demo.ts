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
