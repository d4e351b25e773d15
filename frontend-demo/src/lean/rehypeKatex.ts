// rehype-katex without KaTeX: math stays as the text the model wrote.
export default function rehypeKatex(): void {}
