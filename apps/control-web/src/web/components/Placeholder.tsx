/** A page whose screens are not built yet: says so plainly instead of showing something made up. */
export function Placeholder({ title, about }: { title: string; about: string }) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">{title}</h1>
      <p className="placeholder">Not built yet. {about}</p>
    </section>
  );
}
