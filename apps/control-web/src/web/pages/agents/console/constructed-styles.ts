/**
 * xterm.js's DOM renderer writes part of its look (cell size, theme colours, the scrollbar) into `<style>`
 * elements it creates and fills at run time. The page's policy (`style-src 'self'`, no inline styles) refuses
 * those. While a terminal is open, `document.createElement('style')` hands out an inert stand-in (a
 * `<template>`, never rendered) whose text goes into a constructed stylesheet adopted by the document
 * instead: constructed sheets are not inline styles, so the policy stays strict and the terminal looks right.
 * xterm's static stylesheet is bundled by Vite like the page's own (see TerminalPanel).
 *
 * Returns the release function; the patch is removed when the last open terminal releases it.
 */
let holders = 0;

export function routeInlineStylesToConstructedSheets(doc: Document = document): () => void {
  if (holders++ === 0) {
    const create = Document.prototype.createElement;
    const patched = function (this: Document, tagName: string, options?: ElementCreationOptions) {
      if (tagName.toLowerCase() === 'style') return standIn(this, create);
      return create.call(this, tagName, options);
    };
    Object.defineProperty(doc, 'createElement', { value: patched, configurable: true, writable: true });
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holders === 0) delete (doc as { createElement?: unknown }).createElement;
  };
}

function standIn(doc: Document, create: Document['createElement']): HTMLElement {
  const element = create.call(doc, 'template');
  const sheet = new CSSStyleSheet();
  let text = '';
  doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
  Object.defineProperty(element, 'textContent', {
    configurable: true,
    get: () => text,
    set: (value: string | null) => {
      text = value ?? '';
      sheet.replaceSync(text);
    },
  });
  const remove = element.remove.bind(element);
  element.remove = () => {
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet);
    remove();
  };
  return element;
}
