// The console's streaming-safe Markdown closing (console/src/chat/partial-markdown.ts, docs/console.md).
import { describe, expect, it } from "vitest";
import { closeOpenMarkup } from "../../console/src/chat/partial-markdown.ts";

describe("closeOpenMarkup", () => {
  it("closes bold, italic and inline code opened in the last paragraph", () => {
    expect(closeOpenMarkup("This is **bo")).toBe("This is **bo**");
    expect(closeOpenMarkup("an *it")).toBe("an *it*");
    expect(closeOpenMarkup("run `npm")).toBe("run `npm`");
    expect(closeOpenMarkup("**bold *and it")).toBe("**bold *and it***");
  });
  it("leaves complete text, list bullets and open fences alone", () => {
    expect(closeOpenMarkup("**done** and *done*")).toBe("**done** and *done*");
    expect(closeOpenMarkup("* one\n* two")).toBe("* one\n* two");
    expect(closeOpenMarkup("```ts\nconst a = 2 ** 3")).toBe("```ts\nconst a = 2 ** 3");
    expect(closeOpenMarkup("`a ** b` is code")).toBe("`a ** b` is code");
  });
  it("hides an opener that has no text after it yet", () => {
    expect(closeOpenMarkup("Some **")).toBe("Some ");
  });
  it("looks at the last paragraph only", () => {
    expect(closeOpenMarkup("odd * star\n\nnew **pa")).toBe("odd * star\n\nnew **pa**");
  });
});
