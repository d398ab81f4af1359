package ec2

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
)

// Images returns the available images term selects, with EC2 DescribeImages: the term's fields become
// filters (name, image-id, tag:KEY or tag-key for "*", state=available) and its owners the Owner
// parameter, which gives EC2 the semantics facts.MatchImage gives a snapshot. term must be resolved
// (facts.ResolveImageTerm): an ssmParameter term is the composing provider's to resolve, since the
// parameter is SSM's.
func (p *Provider) Images(ctx context.Context, term facts.ImageTerm) ([]facts.Image, error) {
	if term.SSMParameter != "" {
		return nil, fmt.Errorf("image term %s: resolve its SSM parameter before asking EC2", term)
	}
	owners := term.Owners()
	if owners != nil && len(owners) == 0 {
		return nil, nil // an owner of commas only: no owner, no image
	}
	q := awscall.Question{Fact: facts.Images, Action: "ec2:DescribeImages", Key: term.String()}
	return awscall.Lookup(ctx, p.caller, p.images, q, func(ctx context.Context) ([]facts.Image, bool, error) {
		var out []facts.Image
		pages := ec2.NewDescribeImagesPaginator(p.api, &ec2.DescribeImagesInput{
			Filters: imageFilters(term), Owners: owners, IncludeDeprecated: aws.Bool(true), MaxResults: aws.Int32(1000),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, false, err
			}
			for _, img := range page.Images {
				out = append(out, facts.Image{
					ID: aws.ToString(img.ImageId), Name: aws.ToString(img.Name), OwnerID: aws.ToString(img.OwnerId),
					OwnerAlias: aws.ToString(img.ImageOwnerAlias), Architecture: string(img.Architecture),
					State: string(img.State), CreationDate: aws.ToString(img.CreationDate), Tags: tagMap(img.Tags),
				})
			}
		}
		facts.SortImages(out) // in the snapshot provider's order
		return out, len(out) == 0, nil
	})
}
