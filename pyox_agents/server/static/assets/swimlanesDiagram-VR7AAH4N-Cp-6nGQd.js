import{r as e,t}from"./chunk-SHT3W25Y-DGMnlk0m.js";import"./chunk-POPQ4Y6H-BNg2c9RN.js";import{dr as n}from"./mermaid.core-Cl6ZA5Hb.js";import"./chunk-F27PBJKO-BhDgUYnh.js";var r=t({defaultLayout:`swimlane`,styles:n(t=>`${e(t)}
  .swimlane.cluster rect {
    stroke: ${t.clusterBorder} !important;
  }
  [data-look="neo"].cluster rect {
    filter: none;
  }
`,`getStyles`)});export{r as diagram};